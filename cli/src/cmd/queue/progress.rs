//! A queued task's progress, from its `task run` child to the worker that stores it with
//! the task (so `task show` and `serve --queue` have it wherever the task ran): its stages
//! and its agent runs' events.
//!
//! The worker starts `task run --json` with `FORGE_QUEUE_TASK_ID` set; such a run writes
//! one JSON line `{"forge_progress": {...}}` per stage and one `{"forge_event": {...}}` per
//! agent event (redacted like the run's artifacts) on stdout before its report (which is
//! printed after every stage, pretty, so no report line looks like one of these), and its
//! usual progress lines on stderr as always.

use std::io::Write;

use forge_app::task::TaskProgress;
use forge_domain::redact::Redactor;
use forge_domain::result::SinkDelivery;
use forge_domain::{AgentEvent, RunId, SessionId};
use forge_ports::{EventSink, RunSink};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::output::style::Style;

/// The key a stage line's object has, and only it.
const KEY: &str = "forge_progress";
/// The key an agent event line's object has, and only it.
const EVENT_KEY: &str = "forge_event";

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

/// The event kind (`stage`, `agent`) and data of a stdout line of `task run`, `None` for
/// any other line.
pub fn parse(line: &str) -> Option<(&'static str, Value)> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (key, data) = map.iter().next()?;
    let kind = match key.as_str() {
        KEY => "stage",
        EVENT_KEY => "agent",
        _ => return None,
    };
    data.is_object().then(|| (kind, data.clone()))
}

/// Under a worker, the event sink of `task run`'s agent: each event a line on stdout.
pub struct EventLines {
    pub redactor: Redactor,
}

impl EventSink for EventLines {
    fn open(&self, _run_id: &RunId) -> Box<dyn RunSink> {
        Box::new(EventLineSink {
            redactor: self.redactor.clone(),
            delivery: SinkDelivery::default(),
        })
    }
}

/// The line for `event`, its secrets masked.
fn event_line(event: &AgentEvent, redactor: &Redactor) -> Option<String> {
    let text = serde_json::to_string(event).ok()?;
    Some(format!("{{\"{EVENT_KEY}\":{}}}", redactor.redact(&text)))
}

struct EventLineSink {
    redactor: Redactor,
    delivery: SinkDelivery,
}

impl RunSink for EventLineSink {
    fn push(&mut self, event: &AgentEvent, _session_id: Option<&SessionId>, _timestamp_ms: u64) {
        let Some(line) = event_line(event, &self.redactor) else {
            self.delivery.dropped += 1;
            return;
        };
        let mut out = std::io::stdout().lock();
        match writeln!(out, "{line}").and_then(|()| out.flush()) {
            Ok(()) => self.delivery.delivered += 1,
            Err(_) => self.delivery.dropped += 1,
        }
    }

    fn close(self: Box<Self>) -> SinkDelivery {
        self.delivery
    }
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
    fn an_agent_event_line_parses_back_to_the_event_redacted() {
        let redactor = Redactor::new().with_secrets(["sk-live-1234567890"]);
        let event = AgentEvent::Text {
            text: "the key is sk-live-1234567890".into(),
            delta: false,
        };
        let line = event_line(&event, &redactor).unwrap();
        let (kind, data) = parse(&line).unwrap();
        assert_eq!(kind, "agent");
        assert_eq!(data["type"], "text");
        assert_eq!(data["text"], "the key is [REDACTED]");
    }

    #[test]
    fn progress_lines_round_trip_and_nothing_else_parses_as_one() {
        let p = TaskProgress {
            stage: Stage::Validation,
            elapsed_ms: 1_500,
            cost_usd: 0.25,
            detail: "cargo test".into(),
        };
        assert_eq!(parse(&line(&p)), Some(("stage", stage_data(&p))));
        for other in [
            "{",
            "}",
            "  \"status\": \"validated\",",
            "{\"forge_progress\": 1}",
            "{\"forge_event\": \"text\"}",
            "{\"forge_events\": {}}",
            "{\"forge_progress\": {}, \"x\": 1}",
            "{\"status\": \"validated\"}",
            "not json",
            "",
        ] {
            assert_eq!(parse(other), None, "{other:?}");
        }
    }
}
