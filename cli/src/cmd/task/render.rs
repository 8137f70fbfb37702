//! The human side of `task run`: one progress line per stage on stderr, and the final
//! report.

use std::fmt::Write as _;
use std::io::Write;

use forge_app::task::{Stage, TaskProgress};
use forge_domain::task::{
    CycleKind, Severity, StopReason, TaskOutcome, TaskStatus, ValidationReport, ValidationStep,
};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::output::style::Style;

/// Prints each stage as it begins (`[  1.2s $0.0123] agent main`), until the channel
/// closes. `show`: false for `--json` (progress would mix with nothing, but stays quiet).
pub async fn progress(mut rx: UnboundedReceiver<TaskProgress>, style: Style, show: bool) {
    while let Some(p) = rx.recv().await {
        if !show || p.stage == Stage::Done {
            continue;
        }
        let line = format!(
            "{} {}{}",
            style.dim(format!(
                "[{:>6.1}s ${:.4}]",
                p.elapsed_ms as f64 / 1000.0,
                p.cost_usd
            )),
            style.bold(p.stage.as_str()),
            if p.detail.is_empty() {
                String::new()
            } else {
                format!(" {}", p.detail)
            }
        );
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// [`report`], then the delivery's lines when the change was delivered.
pub fn report_with_delivery(o: &TaskOutcome, style: Style) -> String {
    let mut text = report(o, style);
    if o.delivery.is_some() {
        text.push_str(&crate::cmd::delivery::delivery_text(o));
    }
    text
}

/// The final report, for a person.
pub fn report(o: &TaskOutcome, style: Style) -> String {
    let mut s = String::new();
    heading(&mut s, o, style);
    baseline(&mut s, o, style);
    tests(&mut s, o, style);
    cycles(&mut s, o, style);
    changes(&mut s, o, style);
    verdict(&mut s, o, style);
    s
}

/// The status line, the provider and model, the work tree.
fn heading(s: &mut String, o: &TaskOutcome, style: Style) {
    let label = o.status.label();
    let status = match o.status.as_str() {
        "validated" | "committed" => style.green(label),
        "failed" | "rejected" => style.red(label),
        _ => style.yellow(label),
    };
    // `not validated (no steps)` says its reason itself; anything delivered from such a
    // change says it was not validated.
    match (o.status, o.stop_reason) {
        (TaskStatus::NotValidated, _) => {
            let _ = writeln!(s, "\ntask {}: {status}", o.task_id);
        }
        (_, StopReason::NoSteps) => {
            let _ = writeln!(
                s,
                "\ntask {}: {status} (not validated: no steps)",
                o.task_id
            );
        }
        _ => {
            let _ = writeln!(s, "\ntask {}: {status} ({})", o.task_id, o.stop_reason);
        }
    }
    let _ = writeln!(
        s,
        "{} {} · model {} · branch {}",
        o.provider,
        o.task_type.as_str(),
        o.model.as_deref().unwrap_or("(default)"),
        o.branch
    );
    let _ = writeln!(s, "work tree {}", o.worktree);
}

/// Which build cache each baseline step used, what already failed before the agent, and
/// what could not run because the sandbox refused it a connection.
fn baseline(s: &mut String, o: &TaskOutcome, style: Style) {
    if let Some(baseline) = &o.baseline {
        baseline_lines(s, baseline, style);
    }
}

/// Per validation step: the tests newly failing, already failing and fixed.
fn tests(s: &mut String, o: &TaskOutcome, style: Style) {
    for t in &o.tests {
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        let verdict = if t.regression {
            style.red("blamed on the change")
        } else {
            style.green("not blamed")
        };
        let _ = writeln!(
            s,
            "{} tests: newly failing {} · already failing {} · fixed {} · {verdict}{}",
            t.step,
            list(&t.newly_failing),
            list(&t.already_failing),
            list(&t.fixed),
            t.reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        );
    }
}

/// One line per agent run: its kind, cost and validation.
fn cycles(s: &mut String, o: &TaskOutcome, style: Style) {
    for (i, c) in o.cycles.iter().enumerate() {
        let validation = c
            .validation
            .as_ref()
            .map_or("not validated".to_owned(), |v| {
                if v.passed {
                    "validation passed".to_owned()
                } else {
                    let failing: Vec<_> = v.failing().map(|st| st.name.as_str()).collect();
                    format!("validation failed: {}", failing.join(", "))
                }
            });
        let _ = writeln!(
            s,
            "  cycle {} {} ${:.4} · {validation}",
            i + 1,
            match c.kind {
                CycleKind::Main => "main",
                CycleKind::ValidationFix => "validation fix",
                CycleKind::ReviewFix => "review fix",
            },
            c.cost_usd
        );
        for step in c.validation.iter().flat_map(|v| &v.steps) {
            unreachable_lines(s, "    ", step, style);
        }
    }
}

/// The changed files and the review's findings.
fn changes(s: &mut String, o: &TaskOutcome, style: Style) {
    if !o.files.is_empty() {
        let _ = writeln!(s, "files:");
        for f in &o.files {
            let _ = writeln!(
                s,
                "  {} {} (+{} -{})",
                f.change.as_str(),
                f.path,
                f.added,
                f.removed
            );
        }
    }
    if !o.review.findings.is_empty() {
        let _ = writeln!(s, "review:");
    }
    for f in &o.review.findings {
        let sev = match f.severity {
            Severity::Critical => style.red(f.severity.label()),
            Severity::Warning => style.yellow(f.severity.label()),
            Severity::Info => style.dim(f.severity.label()),
        };
        let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(s, "  {sev} {} {}{line}: {}", f.rule, f.path, f.message);
    }
}

/// Risk, cost, the sandbox and what it refused, the error, how to undo.
fn verdict(s: &mut String, o: &TaskOutcome, style: Style) {
    let _ = writeln!(
        s,
        "risk {}/10 ({}){}",
        o.risk.score,
        o.risk.level.as_str(),
        if o.risk.reasons.is_empty() {
            String::new()
        } else {
            format!(": {}", o.risk.reasons.join("; "))
        }
    );
    let _ = writeln!(
        s,
        "cost ${:.4} · {:.1}s",
        o.cost_usd,
        o.duration_ms as f64 / 1000.0
    );
    match o.sandbox.as_deref() {
        Some("off") => {
            let _ = writeln!(s, "{}", style.yellow("sandbox: off"));
        }
        Some(sandbox) => {
            let _ = writeln!(s, "sandbox: {sandbox}");
        }
        None => {}
    }
    if !o.sandbox_denied.is_empty() {
        let _ = writeln!(s, "{}", style.yellow("sandbox refused:"));
    }
    for denial in &o.sandbox_denied {
        let _ = writeln!(s, "  {}", denial.describe());
    }
    if let Some(e) = &o.error {
        let _ = writeln!(s, "error: {e}");
    }
    let undo = if o.delivery.is_some() {
        "undo"
    } else {
        "discard"
    };
    let _ = writeln!(s, "{undo}: {}", o.rollback);
}

/// The baseline's lines: the build cache each step used, the steps that already failed
/// (not blamed on the agent), and those that could not run because the sandbox refused
/// them a connection (an environment failure, which excuses nothing).
fn baseline_lines(s: &mut String, baseline: &ValidationReport, style: Style) {
    for step in &baseline.steps {
        if let Some(cache) = &step.cache {
            let _ = writeln!(
                s,
                "baseline {} {:.1}s · build cache {}",
                step.name,
                step.duration_ms as f64 / 1000.0,
                cache.describe()
            );
        }
    }
    let failing: Vec<_> = baseline
        .failing()
        .filter(|st| !st.failed_unreachable())
        .map(|st| st.name.as_str())
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(
            s,
            "baseline already failing: {} (not blamed on the agent)",
            failing.join(", ")
        );
    }
    for step in baseline.unreachable() {
        let _ = writeln!(
            s,
            "baseline {} could not run (an environment failure, not an excuse for the change):",
            step.name
        );
        unreachable_lines(s, "  ", step, style);
    }
}

/// Beside a failed step: what the sandbox refused it
/// (`build could not reach index.crates.io: the sandbox refused it — …`).
fn unreachable_lines(s: &mut String, indent: &str, step: &ValidationStep, style: Style) {
    for line in step.unreachable_lines() {
        let _ = writeln!(s, "{indent}{}", style.yellow(line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_for_a_person() {
        let outcome: TaskOutcome = serde_json::from_value(serde_json::json!({
            "task_id": "task-1",
            "status": "validated",
            "stop_reason": "validated",
            "provider": "claude",
            "task": "Fix the failing JWT test",
            "task_type": "fix",
            "model": "haiku",
            "branch": "forge/task-1",
            "worktree": "/r/.forgecode/worktrees/task-1",
            "cycles": [
                {"kind": "main", "run_id": "r1", "session_id": "s1", "cost_usd": 0.1,
                 "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0},
                 "validation": {"passed": false, "steps": [{"name": "test", "command": "sh test.sh", "exit_code": 1, "duration_ms": 5, "output_tail": "FAIL"}]}},
                {"kind": "validation_fix", "run_id": "r2", "session_id": "s1", "cost_usd": 0.05,
                 "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0},
                 "validation": {"passed": true, "steps": [{"name": "test", "command": "sh test.sh", "exit_code": 0, "duration_ms": 5, "output_tail": ""}]}}
            ],
            "baseline": {"passed": false, "steps": [{"name": "lint", "command": "sh lint.sh", "exit_code": 1, "duration_ms": 3, "output_tail": "old"}]},
            "tests": [{"step": "lint", "already_failing": ["test_legacy"], "newly_failing": [], "fixed": ["test_old"], "regression": false}],
            "review": {"findings": [{"rule": "ci-config", "severity": "warning", "path": ".github/workflows/ci.yml", "line": null, "message": "CI configuration changed"}]},
            "risk": {"score": 2, "level": "low", "reasons": ["CI configuration changed (+2)"]},
            "files": [{"path": "auth/jwt.py", "change": "modified", "added": 3, "removed": 1}],
            "cost_usd": 0.15,
            "usage": {"input_tokens": 20, "output_tokens": 4, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0},
            "duration_ms": 4200,
            "rollback": "git worktree remove --force '/r/.forgecode/worktrees/task-1' && git branch -D 'forge/task-1'"
        }))
        .unwrap();
        insta::assert_snapshot!(report(&outcome, Style::plain()));
    }

    #[test]
    fn a_step_the_sandbox_cut_off_says_so_beside_it() {
        let build = |exit: i32| {
            serde_json::json!({"name": "build", "command": "cargo build", "exit_code": exit,
                "duration_ms": 5, "output_tail": "spurious network error",
                "sandbox_denied": [{"kind": "network", "target": "index.crates.io:443",
                    "reason": "the host is not in [sandbox] allow_hosts"}]})
        };
        let outcome: TaskOutcome = serde_json::from_value(serde_json::json!({
            "task_id": "task-1", "status": "failed", "stop_reason": "max_cycles",
            "provider": "claude", "task": "t", "task_type": "fix", "model": null,
            "branch": "forge/task-1", "worktree": "/w",
            "cycles": [{"kind": "main", "run_id": "r1", "session_id": "s1", "cost_usd": 0.1,
                "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0},
                "validation": {"passed": false, "steps": [build(101)]}}],
            "baseline": {"passed": false, "steps": [build(101)]},
            "review": {"findings": []},
            "risk": {"score": 0, "level": "low", "reasons": []},
            "files": [], "cost_usd": 0.1,
            "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0},
            "duration_ms": 10, "rollback": "git worktree remove"
        }))
        .unwrap();
        let text = report(&outcome, Style::plain());
        let line = "build could not reach index.crates.io: the sandbox refused it — add it to \
                    [sandbox] allow_hosts";
        assert!(text.contains(&format!("\n    {line}\n")), "{text}");
        assert!(text.contains("baseline build could not run"), "{text}");
        assert!(!text.contains("baseline already failing"), "{text}");
    }
}
