//! End of a run: the decoder's state → `ResultPieces`.
//!
//! Codex's terminal events are `turn.completed` (success) and `turn.failed`; neither means the
//! process died first (SIGINT/SIGTERM mid-turn print nothing). Codex reports tokens, never
//! money or a stop reason, and its usage is the thread's running total (see `rollout.rs`).

use forge_domain::{CostSource, ExecutionMetadata, ForgeError, error::excerpt};
use forge_ports::{ProcessExit, ResultPieces};

use crate::decode::CodexDecoder;

/// Printed by every `codex exec` run on stderr; not a problem.
const STDIN_NOTICE: &str = "Reading additional input from stdin";

pub(crate) fn finish(dec: &mut CodexDecoder, exit: Option<&ProcessExit>) -> ResultPieces {
    let exit_code = exit.and_then(|e| e.code);
    let reported_success = match (&dec.turn_failed, dec.turn_completed) {
        (Some(_), _) => Some(false),
        (None, true) => Some(true),
        (None, false) => None,
    };

    let mut errors = Vec::new();
    if let Some(message) = &dec.turn_failed {
        errors.push(ForgeError::ProviderExecution {
            exit_code,
            stderr_summary: message.clone(),
            hint: hint_for(message),
        });
    } else if let Some(code) = exit_code.filter(|c| *c != 0) {
        let summary = exit
            .map(|e| stderr_summary(&e.stderr_tail))
            .unwrap_or_default();
        let hint = hint_for(&summary);
        errors.push(ForgeError::ProviderExecution {
            exit_code: Some(code),
            stderr_summary: match (summary.is_empty(), code) {
                (false, _) => summary,
                // A shell-style 128+n status: the process died of signal n.
                (true, 129..=192) => {
                    format!("codex exited with code {code} (signal {})", code - 128)
                }
                (true, _) => format!("codex exited with code {code}"),
            },
            hint,
        });
    }

    let mut notes = Vec::new();
    let usage = dec.cumulative.and_then(|total| dec.run_usage(total));
    let session_usage = dec.cumulative.filter(|_| dec.resuming);
    if dec.resuming && dec.cumulative.is_some() {
        notes.push(match dec.baseline {
            Some(_) => "usage is this run's own: the thread's running total (session_usage) less its total before the run, from the thread's rollout".to_owned(),
            None => "this run's own usage is not known: the thread's total before the run could not be read; session_usage is the thread's running total".to_owned(),
        });
    }
    let model = dec.model().map(str::to_owned);
    let cost_usd = match (&model, &usage) {
        (Some(model), Some(usage)) => dec.pricing.estimate(model, usage),
        _ => None,
    };

    // Moved out, not cloned: `finish` ends the run (a second call sees no tool calls).
    let acc = &mut dec.acc;
    ResultPieces {
        reported_success,
        content: acc.take_last_text().unwrap_or_default(),
        tool_calls: std::mem::take(&mut acc.tool_calls),
        errors,
        metadata: ExecutionMetadata {
            session_id: acc.session_id.clone(),
            model,
            usage: usage.unwrap_or_default(),
            session_usage,
            cost_usd,
            cost_source: cost_usd.map(|_| CostSource::Estimated),
            num_turns: (dec.turns > 0).then_some(dec.turns),
            exit_code,
            // Codex reports no stop reason; the turn's outcome is in `reported_success`.
            stop_reason: None,
            workdir: Some(dec.workdir.clone()),
            changed_files: std::mem::take(&mut acc.changed_files),
            notes,
            ..ExecutionMetadata::default()
        },
    }
}

/// The line of stderr worth showing: the first one naming an error, else the last one,
/// without Codex's constant stdin notice.
pub(crate) fn stderr_summary(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(STDIN_NOTICE))
        .collect();
    let pick = lines
        .iter()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or_else(|| lines.last());
    pick.map(|l| excerpt(l, 500)).unwrap_or_default()
}

/// What a person can do about a failure Codex reported.
pub(crate) fn hint_for(message: &str) -> Option<String> {
    let has = |needle: &str| message.contains(needle);
    let hint = if has("Not inside a trusted directory") {
        "run inside a git repository, or let forge pass --skip-git-repo-check"
    } else if has("no rollout found") {
        "the thread is not in this CODEX_HOME: resume with the home and workdir the session used"
    } else if has("unexpected argument") {
        "this codex release rejects a flag: compare `codex exec --help` with the configured args"
    } else if has("Missing environment variable") {
        "set the model provider's env_key variable named in config.toml"
    } else if has("401") || has("Unauthorized") {
        "run `codex login`, or set OPENAI_API_KEY / CODEX_API_KEY"
    } else if has("429") || has("Too Many Requests") || has("rate limit") {
        "the model provider is rate limiting: wait, or run fewer agents at once"
    } else if has("Error loading config.toml") || has("Error parsing -c overrides") {
        "fix the codex configuration ($CODEX_HOME/config.toml or -c overrides)"
    } else {
        return None;
    };
    Some(hint.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_summaries_skip_the_stdin_notice() {
        let check = |stderr: &str, want: &str| assert_eq!(stderr_summary(stderr), want);
        check("Reading additional input from stdin...\n", "");
        check(
            "Reading additional input from stdin...\nNot inside a trusted directory and --skip-git-repo-check was not specified.\n",
            "Not inside a trusted directory and --skip-git-repo-check was not specified.",
        );
        check(
            "Error: thread/resume: no rollout found for thread id x\n  0: backtrace\n",
            "Error: thread/resume: no rollout found for thread id x",
        );
    }

    #[test]
    fn hints_name_an_action() {
        assert!(hint_for("unexpected status 401 Unauthorized").is_some());
        assert!(hint_for("no rollout found for thread id").is_some());
        assert_eq!(hint_for("something odd"), None);
    }
}
