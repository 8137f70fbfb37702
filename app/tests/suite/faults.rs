//! Every fault case through the REAL process runner and file-system bundle (the fake agent
//! CLI misbehaving on purpose): the stream goes on, the result says what happened, and the
//! bundle is complete. Snapshots hold the bundle's file list and result.json, with ids, times
//! and paths filtered.

use std::path::Path;
use std::time::Duration;

use forge_app::CodeAgent;
use forge_domain::{ExecutionResult, ExecutionStatus, ForgeError, Redactor};
use forge_ports::{KillLadder, ProviderSettings};

use super::harness::{real_runtime, registry};

const SCRIPT: &str = concat!(
    r#"{"type":"session","id":"s-1"}"#,
    "\n",
    r#"{"type":"brand_new_kind","x":1}"#,
    "\n",
    r#"{"type":"text","text":"still here"}"#,
    "\n",
    r#"{"type":"result","ok":true,"text":"done"}"#,
    "\n"
);

struct Case {
    name: &'static str,
    env: &'static [(&'static str, &'static str)],
    timeout_ms: Option<u64>,
    cancel_after: Option<Duration>,
    status: ExecutionStatus,
}

const CASES: &[Case] = &[
    Case {
        name: "huge_line",
        env: &[("FAKE_HUGE_LINE_MB", "50")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Success,
    },
    Case {
        name: "truncated_json",
        env: &[("FAKE_TRUNCATED", "1")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Success,
    },
    Case {
        name: "invalid_utf8",
        env: &[("FAKE_INVALID_UTF8", "1")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Success,
    },
    Case {
        name: "crash",
        env: &[("FAKE_CRASH_AFTER", "3")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Partial,
    },
    Case {
        name: "exit_code",
        env: &[("FAKE_EXIT", "3")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Error,
    },
    Case {
        name: "timeout",
        env: &[("FAKE_HANG", "1"), ("FAKE_IGNORE_SIGINT", "1")],
        timeout_ms: Some(1_500),
        cancel_after: None,
        status: ExecutionStatus::Partial,
    },
    Case {
        name: "cancel",
        env: &[("FAKE_HANG", "1")],
        timeout_ms: None,
        cancel_after: Some(Duration::from_millis(1_500)),
        status: ExecutionStatus::Partial,
    },
    Case {
        name: "secret",
        env: &[("FAKE_SECRET", "sk-test-secret-value-123")],
        timeout_ms: None,
        cancel_after: None,
        status: ExecutionStatus::Success,
    },
];

fn agent(workdir: &Path, script: &Path, case: &Case) -> CodeAgent {
    let runtime = real_runtime();
    let mut env: std::collections::BTreeMap<String, String> = case
        .env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.insert("FAKE_REPLAY".into(), script.display().to_string());
    let settings = ProviderSettings {
        binary: Some(forge_testkit::fake_cli::path()),
        env,
        ..ProviderSettings::default()
    };
    CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", settings)
        .workdir(workdir)
        .kill_ladder(KillLadder {
            interrupt_grace: Duration::from_millis(300),
            terminate_grace: Duration::from_millis(300),
        })
        .redactor(Redactor::new().with_secrets(["sk-test-secret-value-123"]))
        // Below the 50 MB line, so the oversize path is the one exercised.
        .max_line_bytes(8 * 1024 * 1024)
        .build()
        .unwrap()
}

async fn run_case(case: &Case) -> (ExecutionResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, SCRIPT).unwrap();
    let agent = agent(dir.path(), &script, case);
    let mut request = agent.request("go");
    request.timeout_ms = case.timeout_ms;
    let handle = agent.stream(request);
    if let Some(after) = case.cancel_after {
        tokio::time::sleep(after).await;
        handle.cancel();
    }
    let result = tokio::time::timeout(Duration::from_secs(30), handle.result())
        .await
        .expect("run ends");
    (result, dir)
}

fn bundle_files(workdir: &Path, result: &ExecutionResult) -> Vec<String> {
    let run = result.metadata.run_id.as_ref().unwrap();
    let dir = workdir.join(".forgecode/runs").join(run.as_str());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_leaves_a_running_stream_a_clear_result_and_a_complete_bundle() {
    for case in CASES {
        let (result, dir) = run_case(case).await;
        assert_eq!(
            result.status, case.status,
            "{}: {:?}",
            case.name, result.errors
        );
        let files = bundle_files(dir.path(), &result);
        assert_eq!(
            files,
            [
                "events.jsonl",
                "request.json",
                "result.json",
                "run.json",
                "stderr.log",
                "stdout.log"
            ],
            "{}",
            case.name
        );
        let on_disk: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                dir.path()
                    .join(".forgecode/runs")
                    .join(result.metadata.run_id.as_ref().unwrap().as_str())
                    .join("result.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let workdir = dir.path().display().to_string();
        insta::with_settings!({
            snapshot_suffix => case.name,
            filters => vec![(workdir.as_str(), "[WORKDIR]")],
        }, {
            insta::assert_json_snapshot!("fault_result", on_disk, {
                ".metadata.run_id" => "[run_id]",
                ".metadata.duration_ms" => "[duration]",
            });
        });

        // The stream went on past every bad line: the text after it arrived.
        if case.status == ExecutionStatus::Success {
            assert_eq!(result.content, "done", "{}", case.name);
        }
        match case.name {
            "huge_line" | "truncated_json" => assert!(
                result
                    .errors
                    .iter()
                    .any(|e| matches!(e, ForgeError::Parsing { .. })),
                "{}: a parsing error is reported",
                case.name
            ),
            "timeout" => assert!(result.timed_out()),
            "cancel" => assert!(result.was_cancelled()),
            "secret" => {
                let stdout_log = std::fs::read_to_string(
                    dir.path()
                        .join(".forgecode/runs")
                        .join(result.metadata.run_id.as_ref().unwrap().as_str())
                        .join("stdout.log"),
                )
                .unwrap();
                assert!(
                    !stdout_log.contains("sk-test-secret-value-123"),
                    "stdout.log is redacted"
                );
                assert!(stdout_log.contains("[REDACTED]"));
                assert!(
                    !on_disk.to_string().contains("sk-test-secret-value-123"),
                    "result.json is redacted"
                );
            }
            _ => {}
        }
    }
}
