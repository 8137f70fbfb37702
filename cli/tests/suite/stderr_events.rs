//! What a CLI reports only on stderr reaches the event stream: gemini's retries become the
//! same `retry` events the other providers give (offline decoding reads the recorded stderr
//! beside the transcript, as a live run reads the stderr it kept).

use serde_json::Value;

use super::harness::{Sandbox, fake, fixture, fixtures};

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

/// The `retry` events of `forge <args>` printed as JSON lines.
fn retry_events(sandbox: &Sandbox, args: &[&std::ffi::OsStr]) -> Vec<Value> {
    let out = sandbox.forge().args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "retry")
        .collect()
}

/// gemini 0.61's real retry reports (429 with and without a suggested delay, 500, a network
/// error; `fixtures/gemini-retries/`) give `retry` events offline (`events --file`, the
/// `.stderr.txt` beside it) and in a run of the CLI replaying them, the same ones.
#[test]
fn every_recorded_gemini_retry_report_is_a_retry_event_offline_and_live() {
    let sandbox = Sandbox::new();
    let recorded = forge_testkit::fixtures::transcripts("gemini-retries");
    assert_eq!(recorded.len(), 4);
    for t in recorded {
        let dir = fixtures().join("gemini-retries").join(&t.version);
        let file = dir.join(format!("{}.jsonl", t.scenario));
        let stderr = dir.join(format!("{}.stderr.txt", t.scenario));
        let offline = retry_events(
            &sandbox,
            &[
                "events".as_ref(),
                "--provider".as_ref(),
                "gemini".as_ref(),
                "--jsonl".as_ref(),
                "--file".as_ref(),
                file.as_os_str(),
            ],
        );
        let replay = format!("FAKE_REPLAY={}", file.display());
        let replay_stderr = format!("FAKE_REPLAY_STDERR={}", stderr.display());
        let exit = format!("FAKE_EXIT={}", t.exit_code().unwrap_or(0));
        let live = retry_events(
            &sandbox,
            &[
                "run".as_ref(),
                "--jsonl".as_ref(),
                "--provider".as_ref(),
                "gemini".as_ref(),
                "--binary".as_ref(),
                fake().as_os_str(),
                "--env".as_ref(),
                replay.as_ref(),
                "--env".as_ref(),
                replay_stderr.as_ref(),
                "--env".as_ref(),
                exit.as_ref(),
                "hi".as_ref(),
            ],
        );
        assert!(
            !offline.is_empty(),
            "{}: no retry event offline",
            t.scenario
        );
        assert_eq!(offline[0]["attempt"], 1, "{}", t.scenario);
        let rate_limited = t.scenario.starts_with("rate_limit");
        assert_eq!(offline[0]["rate_limited"], rate_limited, "{}", t.scenario);
        let strip = |events: Vec<Value>| -> Vec<Value> {
            events
                .into_iter()
                .map(|mut e| {
                    if let Some(o) = e.as_object_mut() {
                        o.retain(|k, _| !matches!(k.as_str(), "seq" | "ts" | "at_ms" | "run_id"));
                    }
                    e
                })
                .collect()
        };
        assert_eq!(strip(offline), strip(live), "{}", t.scenario);
    }
}
