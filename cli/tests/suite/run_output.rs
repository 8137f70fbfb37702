//! `run --json` / `--jsonl` and the plain-text output of `stream`, on the fake CLI replaying
//! a recorded Claude transcript.

use serde_json::Value;

use super::harness::{Sandbox, fake, fixture, scrub_result, scrub_text};

fn replay(sandbox: &Sandbox, command: &str, scenario: &str, format: &[&str]) -> String {
    let out = sandbox
        .forge()
        .arg(command)
        .args(["--provider", "claude", "--binary"])
        .arg(fake())
        .arg("--env")
        .arg(format!(
            "FAKE_REPLAY={}",
            fixture("claude", scenario).display()
        ))
        .args(format)
        .arg("hi")
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn run_json_prints_the_execution_result() {
    let sandbox = Sandbox::new();
    let mut result: Value =
        serde_json::from_str(&replay(&sandbox, "run", "write_file", &["--json"])).unwrap();
    assert_eq!(result["status"], "success");
    scrub_result(&mut result);
    insta::assert_json_snapshot!("run_json_write_file", result);
}

#[test]
fn run_jsonl_prints_events_then_the_result() {
    let sandbox = Sandbox::new();
    let text = replay(&sandbox, "run", "hello", &["--jsonl"]);
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = lines.last_mut().unwrap();
    assert_eq!(result["status"], "success");
    scrub_result(result);
    insta::assert_json_snapshot!("run_jsonl_hello", lines);
}

#[test]
fn stream_prints_text_tool_lines_and_a_footer() {
    let sandbox = Sandbox::new();
    let text = replay(&sandbox, "stream", "shell_fail", &[]);
    insta::assert_snapshot!(
        "stream_plain_shell_fail",
        scrub_text(&text, sandbox.dir.path())
    );
}

#[test]
fn runs_list_and_show_read_the_bundles() {
    let sandbox = Sandbox::new();
    replay(&sandbox, "run", "hello", &["--json"]);
    let list = sandbox
        .forge()
        .args(["runs", "list", "--json"])
        .assert()
        .success();
    let runs: Value = serde_json::from_slice(&list.get_output().stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    let id = runs[0]["record"]["run_id"].as_str().unwrap().to_owned();
    assert_eq!(runs[0]["record"]["provider"], "claude");
    assert_eq!(runs[0]["has_result"], true);

    let show = sandbox
        .forge()
        .args(["runs", "show", &id, "--events", "--json"])
        .assert()
        .success();
    let shown: Value = serde_json::from_slice(&show.get_output().stdout).unwrap();
    assert_eq!(shown["result"]["status"], "success");
    assert!(!shown["events"].as_array().unwrap().is_empty());

    let human = sandbox.forge().args(["runs", "list"]).assert().success();
    let text = String::from_utf8(human.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains(&id) && text.contains("claude") && text.contains("success"),
        "{text}"
    );
}
