//! The task demo's closing table: one row per provider, read off its task outcome.

use std::fmt::Write as _;

use forge_domain::task::{TaskOutcome, TaskStatus};

/// One provider's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub provider: &'static str,
    /// The task's status (`committed` on success), or `error` when it never started.
    pub status: String,
    pub cycles: usize,
    /// Every correction resumed the first run's session (no fresh session).
    pub same_session: Option<bool>,
    pub risk: Option<u8>,
    pub cost_usd: f64,
    pub seconds: f64,
    /// `forge/<task-id>` and the short commit, when committed.
    pub branch: String,
    pub commit: Option<String>,
    /// Why the provider failed; `None` when it succeeded.
    pub failure: Option<String>,
}

impl Row {
    /// The row of a finished task: a success when its change was committed.
    pub fn of(provider: &'static str, o: &TaskOutcome) -> Row {
        let first = o.cycles.first().and_then(|c| c.session_id.as_ref());
        let same_session = (o.cycles.len() > 1).then(|| {
            first.is_some()
                && o.cycles
                    .iter()
                    .all(|c| c.session_id.as_ref() == first && !c.fresh_session)
        });
        let commit = o.delivery.as_ref().and_then(|d| d.commit.clone());
        let failure = (o.status != TaskStatus::Committed).then(|| {
            let mut why = format!("{} ({})", o.status, o.stop_reason);
            if let Some(e) = &o.error {
                why.push_str(&format!(": {e}"));
            }
            why
        });
        Row {
            provider,
            status: o.status.as_str().to_owned(),
            cycles: o.cycles.len(),
            same_session,
            risk: Some(o.risk.score),
            cost_usd: o.cost_usd,
            seconds: o.duration_ms as f64 / 1000.0,
            branch: o.branch.clone(),
            commit,
            failure,
        }
    }

    /// The row of a provider whose task could not start.
    pub fn failed(provider: &'static str, why: String, seconds: f64) -> Row {
        Row {
            provider,
            status: "error".to_owned(),
            cycles: 0,
            same_session: None,
            risk: None,
            cost_usd: 0.0,
            seconds,
            branch: "-".to_owned(),
            commit: None,
            failure: Some(why),
        }
    }
}

/// The table, then one line per failed provider saying why.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<8}  {:<16}  {:>6}  {:<12}  {:>4}  {:>9}  {:>8}  branch / commit",
        "provider", "status", "cycles", "same session", "risk", "cost", "seconds"
    );
    for r in rows {
        let same = match r.same_session {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let risk = r.risk.map_or("-".to_owned(), |x| format!("{x}/10"));
        let place = match &r.commit {
            Some(c) => format!("{} @ {}", r.branch, &c[..c.len().min(10)]),
            None => r.branch.clone(),
        };
        let _ = writeln!(
            s,
            "{:<8}  {:<16}  {:>6}  {:<12}  {:>4}  {:>9}  {:>8.1}  {place}",
            r.provider,
            r.status,
            r.cycles,
            same,
            risk,
            format!("${:.4}", r.cost_usd),
            r.seconds,
        );
    }
    for r in rows {
        if let Some(why) = &r.failure {
            let _ = writeln!(s, "{} failed: {why}", r.provider);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: &str, sessions: &[&str], fresh: bool, commit: Option<&str>) -> TaskOutcome {
        let cycles: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(i, s)| {
                serde_json::json!({
                    "kind": if i == 0 { "main" } else { "validation_fix" },
                    "run_id": null, "session_id": s, "cost_usd": 0.01,
                    "usage": {}, "validation": null, "fresh_session": fresh && i > 0,
                })
            })
            .collect();
        let delivery = commit.map(
            |c| serde_json::json!({"decision": "committed", "branch": "forge/task-1", "commit": c}),
        );
        serde_json::from_value(serde_json::json!({
            "task_id": "task-1", "status": status,
            "stop_reason": if status == "failed" { "max_cycles" } else { "validated" },
            "provider": "claude", "task": "Write the answer to answer.txt.",
            "task_type": "implement", "model": null, "branch": "forge/task-1",
            "worktree": "/w", "cycles": cycles, "baseline": null,
            "review": {"findings": []},
            "risk": {"score": 1, "level": "low", "reasons": []},
            "files": [], "cost_usd": 0.02, "usage": {}, "duration_ms": 12345,
            "rollback": "git branch -D forge/task-1",
            "error": if status == "failed" { Some("test failed") } else { None },
            "delivery": delivery,
        }))
        .unwrap()
    }

    #[test]
    fn rows_say_what_each_provider_did() {
        let check = |o: TaskOutcome, same: Option<bool>, ok: bool| {
            let row = Row::of("claude", &o);
            assert_eq!(row.same_session, same, "{row:?}");
            assert_eq!(row.failure.is_none(), ok, "{row:?}");
        };
        check(
            outcome("committed", &["s1", "s1"], false, Some("abc")),
            Some(true),
            true,
        );
        // Look-alikes that must not count as the same session resumed.
        check(
            outcome("committed", &["s1", "s2"], false, Some("abc")),
            Some(false),
            true,
        );
        check(
            outcome("committed", &["s1", "s1"], true, Some("abc")),
            Some(false),
            true,
        );
        check(
            outcome("committed", &["s1"], false, Some("abc")),
            None,
            true,
        );
        // Validated but not committed, or failed: the demo failed for that provider.
        check(
            outcome("validated", &["s1", "s1"], false, None),
            Some(true),
            false,
        );
        check(
            outcome("failed", &["s1", "s1"], false, None),
            Some(true),
            false,
        );
    }

    #[test]
    fn the_table() {
        let rows = [
            Row::of(
                "claude",
                &outcome(
                    "committed",
                    &["s1", "s1"],
                    false,
                    Some("0123456789abcdef0123"),
                ),
            ),
            Row::of("codex", &outcome("failed", &["s1", "s1"], false, None)),
            Row::failed("gemini", "gemini is not installed".into(), 0.25),
        ];
        insta::assert_snapshot!(table(&rows));
    }
}
