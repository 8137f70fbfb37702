//! `auto`: configuration errors, the health check, and `auto status|report` of a saved loop.

use forge_domain::autoloop::{AutoConfig, LoopState, PlannerAnswer, RawAutoConfig, StopReason};

use super::harness::Sandbox;

const CONFIG: &str = "task:\n  goal: ship it\nprovider:\n  name: claude\n";

#[test]
fn a_bad_config_names_file_key_and_reason() {
    let sandbox = Sandbox::new();
    let cases = [
        (
            "task:\n  goal: g\n  extra: 1\nprovider: {name: claude}\n",
            "task: unknown field `extra`",
        ),
        (
            "task: {goal: g}\nprovider: {name: cursor}\n",
            "provider.name: unknown provider \"cursor\"",
        ),
        (
            "task: {goal: g}\nclaude: {}\nsafety: {max_iterations: 0}\n",
            "safety.max_iterations: must be at least 1",
        ),
    ];
    for (yaml, message) in cases {
        std::fs::write(sandbox.work().join("auto.yaml"), yaml).unwrap();
        let out = sandbox.forge().args(["auto"]).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains(&format!("auto.yaml: {message}")),
            "{stderr}"
        );
    }
    let out = sandbox
        .forge()
        .args(["auto", "--config", "missing.yaml"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("missing.yaml"));
}

#[test]
fn an_unusable_provider_stops_before_anything_starts() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("auto.yaml"), CONFIG).unwrap();
    std::fs::write(
        sandbox.work().join("forge.toml"),
        "[providers.claude]\nbinary = \"/nonexistent/claude\"\n",
    )
    .unwrap();
    let out = sandbox.forge().arg("auto").assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("health check failed") && stderr.contains("claude is not usable"),
        "{stderr}"
    );
    assert!(!sandbox.work().join(".forgecode/auto").exists());
}

#[test]
fn status_and_report_read_the_saved_loop() {
    let sandbox = Sandbox::new();
    sandbox.forge().args(["auto", "status"]).assert().code(2);
    let raw: RawAutoConfig = serde_json::from_value(serde_json::json!({
        "task": {"goal": "ship it"}, "provider": {"name": "codex"}
    }))
    .unwrap();
    let config = AutoConfig::from_raw(raw, "auto.yaml", &["codex"]).unwrap();
    let mut state = LoopState::new(&config, 1_000);
    state.start_iteration(1_001);
    let answer = PlannerAnswer {
        next_task: "write the docs".into(),
        done: false,
        reason: "none yet".into(),
        research: None,
    };
    state.planned(&config, &answer, None, 1_002);
    state.stop(StopReason::EmergencyStop, 2_000);
    let dir = sandbox.work().join(".forgecode/auto");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("workflow_state.json"),
        serde_json::to_string(&state).unwrap(),
    )
    .unwrap();

    let out = sandbox.forge().args(["auto", "status"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("iteration:   1"), "{text}");
    assert!(text.contains("step:        iteration 1, execute"), "{text}");
    assert!(
        text.contains("stopped:     emergency_stop (during iteration 1, execute)"),
        "{text}"
    );

    let out = sandbox.forge().args(["auto", "report"]).assert().success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        md.contains("- Provider: codex") && md.contains("| 1 | write the docs |"),
        "{md}"
    );
    let out = sandbox
        .forge()
        .args(["auto", "report", "--json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["stop_reason"], "emergency_stop");
}
