//! What a CLI reports only on stderr reaches the event stream: gemini's retries become the
//! same `retry` events the other providers give (offline decoding reads the recorded stderr
//! beside the transcript, as a live run reads the stderr it kept).

use serde_json::Value;

use super::harness::{Sandbox, fixture};

#[test]
fn gemini_retries_on_stderr_are_retry_events() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .forge()
        .args(["events", "--provider", "gemini", "--jsonl", "--file"])
        .arg(fixture("gemini", "rate_limit_then_success"))
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let retries: Vec<&Value> = lines.iter().filter(|e| e["type"] == "retry").collect();
    assert_eq!(retries.len(), 1, "{lines:?}");
    assert_eq!(retries[0]["attempt"], 1);
    assert_eq!(retries[0]["http_status"], 429);
    assert_eq!(retries[0]["rate_limited"], true);
    // The result stays the CLI's success.
    assert_eq!(lines.last().unwrap()["status"], "success");
}
