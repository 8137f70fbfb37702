//! A grandchild that leaves the run's process group (`setsid`, as a daemonising MCP server
//! does) does not outlive the run: it is ended and reported in the result's metadata.

use serde_json::{Value, json};

use super::harness::{Sandbox, alive, fake, fixture};

#[test]
fn a_setsid_grandchild_is_ended_and_reported_in_the_result() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .forge()
        .args(["run", "--provider", "claude", "--binary"])
        .arg(fake())
        .args(["--env", "FAKE_GRANDCHILD=setsid", "--env"])
        .arg(format!(
            "FAKE_REPLAY={}",
            fixture("claude", "hello").display()
        ))
        .args(["--json", "hi"])
        .assert()
        .success();
    let result: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let grandchild = result["raw_events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|event| event["type"] == "grandchild")
        .map(|event| event["pid"].clone())
        .expect("the fake announced its grandchild");
    assert_eq!(
        result["metadata"]["orphans_ended"],
        json!([{
            "pid": grandchild,
            "command": "sleep",
            "run_id": result["metadata"]["run_id"],
            "ended_by": "SIGINT",
        }])
    );
    let pid = i32::try_from(grandchild.as_i64().unwrap()).unwrap();
    assert!(!alive(pid), "the grandchild is gone");
}
