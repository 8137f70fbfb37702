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
            ("forgecode_writable", true),
            ("sandbox", true)
        ]
    );
}

/// A provider's home and key set only in `forge.toml` (`[providers.codex] env`), as a run
/// uses them: doctor checks with that same environment, so it says "logged in" where a run
/// works, and the shell's own `CODEX_HOME` does not override it.
#[test]
fn doctor_uses_the_provider_env_from_forge_toml_like_a_run() {
    let sandbox = Sandbox::new();
    let codex_home = sandbox.dir.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        forge_adapter_codex::mock_provider_config("http://127.0.0.1:9/v1", "gpt-5.5"),
    )
    .unwrap();
    let toml = format!(
        "[providers.codex]\nbinary = {:?}\nenv = {{ CODEX_HOME = {:?}, MOCK_API_KEY = \"x\" }}\n",
        fake().display().to_string(),
        codex_home.display().to_string(),
    );
    std::fs::write(sandbox.work().join("forge.toml"), toml).unwrap();
    let out = sandbox
        .forge()
        .args(["doctor", "--provider", "codex", "--json"])
        .env("CODEX_HOME", sandbox.dir.path().join("elsewhere"))
        .env_remove("MOCK_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codex = &report["providers"][0];
    assert_eq!(codex["authenticated"], Value::Bool(true), "{report:#}");
    assert!(
        codex["auth_detail"]
            .as_str()
            .is_some_and(|d| d.contains("MOCK_API_KEY")),
        "{report:#}"
    );
}
