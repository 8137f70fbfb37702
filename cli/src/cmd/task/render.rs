//! The human side of `task run`: one progress line per stage on stderr, and the final
//! report.

use std::fmt::Write as _;
use std::io::Write;

use forge_app::task::{Stage, TaskProgress};
use forge_domain::task::{Severity, TaskOutcome};
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

/// The final report, for a person.
pub fn report(o: &TaskOutcome, style: Style) -> String {
    let mut s = String::new();
    let status = match o.status.as_str() {
        "validated" | "committed" => style.green(o.status),
        "failed" | "rejected" => style.red(o.status),
        _ => style.yellow(o.status),
    };
    let _ = writeln!(s, "\ntask {}: {status} ({})", o.task_id, o.stop_reason);
    let _ = writeln!(
        s,
        "{} {} · model {} · branch {}",
        o.provider,
        o.task_type.as_str(),
        o.model.as_deref().unwrap_or("(default)"),
        o.branch
    );
    let _ = writeln!(s, "work tree {}", o.worktree);
    if let Some(baseline) = o.baseline.as_ref().filter(|b| !b.passed) {
        let failing: Vec<_> = baseline.failing().map(|st| st.name.as_str()).collect();
        let _ = writeln!(
            s,
            "baseline already failing: {} (not blamed on the agent)",
            failing.join(", ")
        );
    }
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
            "  cycle {} {:?} ${:.4} · {validation}",
            i + 1,
            c.kind,
            c.cost_usd
        );
    }
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
    for f in &o.review.findings {
        let sev = match f.severity {
            Severity::Critical => style.red(f.severity.label()),
            Severity::Warning => style.yellow(f.severity.label()),
            Severity::Info => style.dim(f.severity.label()),
        };
        let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(s, "  {sev} {} {}{line}: {}", f.rule, f.path, f.message);
    }
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
    if let Some(e) = &o.error {
        let _ = writeln!(s, "error: {e}");
    }
    let _ = writeln!(s, "discard: {}", o.rollback);
    s
}
