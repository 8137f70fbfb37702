//! `doctor`: a missing binary is reported with a hint, and the exit code says "not usable".

use serde_json::Value;

use super::harness::{Sandbox, fake};

#[test]
fn doctor_json_with_a_missing_binary() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .forge()
        .args([
            "doctor",
            "--provider",
            "claude",
            "--binary",
            "/nonexistent/claude",
            "--json",
        ])
        .assert()
        .code(1);
    let mut report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let text = serde_json::to_string_pretty(&report).unwrap();
    let text = text.replace(&sandbox.dir.path().display().to_string(), "[sandbox]");
    report = serde_json::from_str(&text).unwrap();
    insta::assert_json_snapshot!("doctor_missing_binary", report);
}

#[test]
fn doctor_finds_a_present_binary_and_checks_the_project() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .forge()
        .args(["doctor", "--provider", "codex", "--binary"])
        .arg(fake())
        .arg("--json")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["providers"][0]["path"],
        Value::String(fake().display().to_string())
    );
    let checks: Vec<(&str, bool)> = report["project"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["check"].as_str().unwrap(), c["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        checks,
        [
            ("workdir", true),
            ("git_repository", false),
            ("forgecode_writable", true)
        ]
    );
}
