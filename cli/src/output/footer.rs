//! The summary under a run: status, cost, tokens, turns, duration, changed files, run id,
//! then the errors with their hints.

use forge_domain::{CostSource, ExecutionResult, ExecutionStatus, ForgeError};

use super::style::Style;

/// The footer's lines (no trailing newline on each).
pub fn render(style: Style, result: &ExecutionResult) -> Vec<String> {
    let m = &result.metadata;
    let status = match result.status {
        ExecutionStatus::Success => style.green("success"),
        ExecutionStatus::Error => style.red("error"),
        ExecutionStatus::Partial => style.yellow("partial"),
    };
    let status = if result.was_cancelled() {
        format!("{status} (cancelled)")
    } else if result.timed_out() {
        format!("{status} (timed out)")
    } else {
        status
    };
    let mut parts = vec![style.bold(status), result.provider.to_string()];
    parts.push(match (m.cost_usd, m.cost_source) {
        (Some(cost), Some(CostSource::Estimated)) => format!("${cost:.4} estimated"),
        (Some(cost), Some(CostSource::Derived)) => format!("${cost:.4} derived"),
        (Some(cost), _) => format!("${cost:.4} reported"),
        // Tokens but no price: say which model the pricing table lacks.
        (None, _) => match (&m.model, m.usage.is_zero()) {
            (Some(model), false) => format!("cost unknown (no price for model {model})"),
            _ => "cost unknown".into(),
        },
    });
    // A resumed session's running total, apart from the run's own figures.
    if let Some(total) = m.session_cost_usd {
        parts.push(format!("session ${total:.4}"));
    }
    let u = &m.usage;
    let mut tokens = format!("{} in / {} out tokens", u.input_tokens, u.output_tokens);
    if u.cache_read_tokens > 0 {
        tokens.push_str(&format!(" ({} cached)", u.cache_read_tokens));
    }
    parts.push(tokens);
    if let Some(turns) = m.num_turns {
        parts.push(format!("{turns} turn{}", if turns == 1 { "" } else { "s" }));
    }
    if let Some(ms) = m.duration_ms {
        parts.push(duration(ms));
    }
    if let Some(run_id) = &m.run_id {
        parts.push(format!("run {run_id}"));
    }
    // Said whenever the user chose to run the agent unconfined.
    if m.sandbox.as_deref() == Some("off") {
        parts.push(style.yellow("sandbox: off"));
    }
    let mut lines = vec![parts.join(&style.dim(" · "))];
    if !m.changed_files.is_empty() {
        lines.push(format!(
            "{} {}",
            style.dim(format!("changed {}:", m.changed_files.len())),
            m.changed_files.join(", ")
        ));
    }
    for error in &result.errors {
        lines.push(format!("{} {error}", style.red("error:")));
        if let ForgeError::ProviderExecution {
            hint: Some(hint), ..
        } = error
        {
            lines.push(format!("  {} {hint}", style.dim("hint:")));
        }
    }
    lines
}

/// `450ms`, `4.2s`, `2m03s`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::{ProviderId, RunId, Usage};

    #[test]
    fn footer_says_status_cost_tokens_turns_duration_files_and_run() {
        let mut r =
            ExecutionResult::empty(ProviderId::new("codex").unwrap(), ExecutionStatus::Success);
        r.metadata.cost_usd = Some(0.0123);
        r.metadata.cost_source = Some(CostSource::Estimated);
        r.metadata.usage = Usage {
            input_tokens: 1200,
            output_tokens: 34,
            cache_read_tokens: 1000,
            ..Usage::default()
        };
        r.metadata.num_turns = Some(1);
        r.metadata.duration_ms = Some(4210);
        r.metadata.run_id = Some(RunId::new("r1").unwrap());
        r.metadata.changed_files = vec!["a.txt".into()];
        r.errors.push(ForgeError::ProviderExecution {
            exit_code: Some(1),
            stderr_summary: "boom".into(),
            hint: Some("log in".into()),
        });
        assert_eq!(
            render(Style::plain(), &r),
            [
                "success · codex · $0.0123 estimated · 1200 in / 34 out tokens (1000 cached) · 1 turn · 4.2s · run r1",
                "changed 1: a.txt",
                "error: provider execution failed (exit code 1): boom",
                "  hint: log in",
            ]
        );
        assert_eq!(duration(123_456), "2m03s");
    }

    /// The cost part: each source named; no cost says which model the table lacks, and a
    /// resumed session's running total sits apart from the run's own figure.
    #[test]
    fn the_cost_part_names_its_source_or_the_unpriced_model() {
        let check = |cost: Option<(f64, CostSource)>,
                     model: Option<&str>,
                     tokens: u64,
                     session: Option<f64>,
                     want: &str| {
            let mut r =
                ExecutionResult::empty(ProviderId::new("codex").unwrap(), ExecutionStatus::Success);
            r.metadata.cost_usd = cost.map(|c| c.0);
            r.metadata.cost_source = cost.map(|c| c.1);
            r.metadata.model = model.map(str::to_owned);
            r.metadata.usage.input_tokens = tokens;
            r.metadata.session_cost_usd = session;
            let line = render(Style::plain(), &r).remove(0);
            let parts: Vec<&str> = line.split(" · ").collect();
            assert_eq!(parts[2..parts.len() - 1].join(" · "), want, "{line}");
        };
        check(
            Some((0.5, CostSource::Reported)),
            None,
            1,
            None,
            "$0.5000 reported",
        );
        check(
            Some((0.5, CostSource::Derived)),
            None,
            1,
            None,
            "$0.5000 derived",
        );
        check(
            None,
            Some("mystery-model"),
            10,
            None,
            "cost unknown (no price for model mystery-model)",
        );
        // Look-alikes: no tokens, or no model known: nothing to name.
        check(None, Some("mystery-model"), 0, None, "cost unknown");
        check(None, None, 10, None, "cost unknown");
        check(
            Some((0.05, CostSource::Reported)),
            None,
            1,
            Some(0.15),
            "$0.0500 reported · session $0.1500",
        );
    }
}
