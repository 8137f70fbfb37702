//! A queued task's stage progress, from its `task run` child to the worker that stores it
//! with the task (so `task show` and `serve --queue` have it wherever the task ran).
//!
//! The worker starts `task run --json` with `FORGE_QUEUE_TASK_ID` set; such a run writes
//! one JSON line `{"forge_progress": {...}}` per stage on stdout before its report (which is
//! printed after every stage, pretty, so no report line looks like a progress line), and
//! its usual progress lines on stderr as always.

use std::io::Write;

use forge_app::task::TaskProgress;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::output::style::Style;

/// The key a progress line's object has, and only it.
const KEY: &str = "forge_progress";

/// The environment variable the worker sets on a task's `task run`.
pub const TASK_ID_ENV: &str = "FORGE_QUEUE_TASK_ID";

/// A stage as stored with the task (kind `stage`).
pub fn stage_data(p: &TaskProgress) -> Value {
    json!({
        "stage": p.stage.as_str(),
        "detail": p.detail,
        "elapsed_ms": p.elapsed_ms,
        "cost_usd": p.cost_usd,
    })
}

/// The line a run under a worker prints for a stage.
pub fn line(p: &TaskProgress) -> String {
    json!({ KEY: stage_data(p) }).to_string()
}

/// The stage of a stdout line of `task run`, `None` for any other line.
pub fn parse(line: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    map.get(KEY).filter(|v| v.is_object()).cloned()
}

/// `task run`'s progress printer: the human lines on stderr (`show`), and under a worker
/// the progress lines on stdout too.
pub async fn print(mut rx: UnboundedReceiver<TaskProgress>, style: Style, show: bool) {
    if std::env::var_os(TASK_ID_ENV).is_none() {
        crate::cmd::task::render::progress(rx, style, show).await;
        return;
    }
    let (tx, human) = unbounded_channel();
    let printer = tokio::spawn(crate::cmd::task::render::progress(human, style, show));
    while let Some(p) = rx.recv().await {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", line(&p));
        let _ = out.flush();
        let _ = tx.send(p);
    }
    drop(tx);
    let _ = printer.await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_app::task::Stage;

    #[test]
    fn progress_lines_round_trip_and_nothing_else_parses_as_one() {
        let p = TaskProgress {
            stage: Stage::Validation,
            elapsed_ms: 1_500,
            cost_usd: 0.25,
            detail: "cargo test".into(),
        };
        assert_eq!(parse(&line(&p)), Some(stage_data(&p)));
        for other in [
            "{",
            "}",
            "  \"status\": \"validated\",",
            "{\"forge_progress\": 1}",
            "{\"forge_progress\": {}, \"x\": 1}",
            "{\"status\": \"validated\"}",
            "not json",
            "",
        ] {
            assert_eq!(parse(other), None, "{other:?}");
        }
    }
}
