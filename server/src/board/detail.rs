//! A task's detail for its page: the stages as a timeline (times and costs), each
//! validation cycle's steps, the tests already failing / newly failing / fixed, the review
//! findings, the risk with its reasons, the delivery, and the changed files with their diff.
//!
//! Read from the task report (`task run --json`'s object) and, for a queued task, its
//! stored `stage` events; nothing is recomputed.

use forge_domain::queue::QueueEvent;
use serde_json::{Value, json};

use super::card::Card;
use super::diff::FileDiff;

/// The stages of a task's stored events, each with when it began, how long it took (to
/// the next stage, or to the task's end) and the cost so far.
pub fn stages(events: &[QueueEvent], end_ms: Option<u64>) -> Vec<Value> {
    let stages: Vec<&QueueEvent> = events.iter().filter(|e| e.kind == "stage").collect();
    stages
        .iter()
        .enumerate()
        .map(|(i, event)| {
            let until = stages.get(i + 1).map(|next| next.at_ms).or(end_ms);
            json!({
                "stage": event.data.get("stage"),
                "detail": event.data.get("detail"),
                "at_ms": event.at_ms,
                "duration_ms": until.map(|u| u.saturating_sub(event.at_ms)),
                "cost_usd": event.data.get("cost_usd"),
            })
        })
        .collect()
}

/// The report's cycles as the page shows them: kind, cost, and the validation's steps.
fn cycles(report: &Value) -> Vec<Value> {
    let Some(cycles) = report.get("cycles").and_then(Value::as_array) else {
        return Vec::new();
    };
    cycles
        .iter()
        .enumerate()
        .map(|(i, cycle)| {
            let steps: Vec<Value> = cycle
                .pointer("/validation/steps")
                .and_then(Value::as_array)
                .map(|steps| {
                    steps
                        .iter()
                        .map(|s| {
                            json!({
                                "name": s.get("name"),
                                "command": s.get("command"),
                                "exit_code": s.get("exit_code"),
                                "duration_ms": s.get("duration_ms"),
                                "timed_out": s.get("timed_out"),
                                "failed_tests": s.get("failed_tests"),
                                "log": s.get("output_tail"),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "n": i + 1,
                "kind": cycle.get("kind"),
                "run_id": cycle.get("run_id"),
                "cost_usd": cycle.get("cost_usd"),
                "passed": cycle.pointer("/validation/passed"),
                "steps": steps,
            })
        })
        .collect()
}

/// The detail of a task: its card, the timeline, and what its report says.
pub fn detail(
    card: &Card,
    prompt: &str,
    report: Option<&Value>,
    stages: Vec<Value>,
    approval: Option<Value>,
    files: &[FileDiff],
    diff_note: Option<String>,
) -> Value {
    let field = |name: &str| {
        report
            .and_then(|r| r.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    json!({
        "card": card,
        "prompt": prompt,
        "stages": stages,
        "cycles": report.map(cycles).unwrap_or_default(),
        "tests": field("tests"),
        "findings": report
            .and_then(|r| r.pointer("/review/findings"))
            .cloned()
            .unwrap_or_else(|| json!([])),
        "risk": field("risk"),
        "delivery": field("delivery"),
        "pull_request": field("pull_request"),
        "approval": approval,
        "summary": field("summary"),
        "error": field("error"),
        "stop_reason": field("stop_reason"),
        "usage": field("usage"),
        "files": files,
        "diff_note": diff_note,
    })
}
