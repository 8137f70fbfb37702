use pretty_assertions::assert_eq;
use serde_json::json;

use super::KNOWN;
use crate::autoloop::config::{AutoConfig, RawAutoConfig};

/// `Ok(provider)` or `Err(key)`; the reason is checked to be non-empty and the file named.
fn check(input: serde_json::Value, expected: Result<&str, &str>) {
    let raw: RawAutoConfig = serde_json::from_value(input.clone()).unwrap();
    let got = AutoConfig::from_raw(raw, "auto.yaml", &KNOWN);
    match (got, expected) {
        (Ok(c), Ok(p)) => assert_eq!(c.provider, p, "{input}"),
        (Err(e), Err(key)) => {
            assert_eq!(e.key, key, "{input}: {e}");
            assert_eq!(e.file, "auto.yaml");
            assert!(!e.reason.is_empty());
            assert!(e.to_string().starts_with(&format!("auto.yaml: {key}: ")));
        }
        (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn accepted_and_refused_configs() {
    let goal = json!({"goal": "g"});
    let cases: Vec<(serde_json::Value, Result<&str, &str>)> = vec![
        (
            json!({"task": goal, "provider": {"name": "codex"}}),
            Ok("codex"),
        ),
        // The seed's `claude:` section: claude unless it names another provider.
        (
            json!({"task": goal, "claude": {"model": "sonnet"}}),
            Ok("claude"),
        ),
        (
            json!({"task": goal, "claude": {"name": "gemini"}}),
            Ok("gemini"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "claude": {}}),
            Err("claude"),
        ),
        (json!({"task": goal}), Err("provider")),
        (json!({"task": goal, "provider": {}}), Err("provider.name")),
        (
            json!({"task": goal, "provider": {"name": "cursor"}}),
            Err("provider.name"),
        ),
        (
            json!({"task": goal, "claude": {"name": "cursor"}}),
            Err("claude.name"),
        ),
        (
            json!({"task": goal, "provider": {"name": "codex", "timeout_seconds": 0}}),
            Err("provider.timeout_seconds"),
        ),
        (json!({"provider": {"name": "claude"}}), Err("task")),
        (
            json!({"task": {"goal": "  "}, "provider": {"name": "claude"}}),
            Err("task.goal"),
        ),
        (
            json!({"task": {"goal": "g", "initial_prompt": ""}, "provider": {"name": "claude"}}),
            Err("task.initial_prompt"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"max_iterations": 0}}),
            Err("safety.max_iterations"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"max_duration_hours": -1.0}}),
            Err("safety.max_duration_hours"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"iteration_timeout_seconds": 0}}),
            Err("safety.iteration_timeout_seconds"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"max_consecutive_errors": 0}}),
            Err("safety.max_consecutive_errors"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"emergency_stop_file": ""}}),
            Err("safety.emergency_stop_file"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"max_total_cost_usd": -0.5}}),
            Err("safety.max_total_cost_usd"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "safety": {"max_total_cost_usd": 0.0}}),
            Ok("claude"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "persona": {"default_persona": "x", "personas": [{"name": "a"}]}}),
            Err("persona.default_persona"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "persona": {"default_persona": "a", "personas": [{"name": "a"}, {"name": "a"}]}}),
            Err("persona.personas[1].name"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "persona": {"default_persona": "a", "personas": [{"name": "a", "keywords": ["ok", " "]}]}}),
            Err("persona.personas[0].keywords[1]"),
        ),
        // No personas listed: the default persona stands alone.
        (
            json!({"task": goal, "provider": {"name": "claude"}, "persona": {"default_persona": "solo"}}),
            Ok("claude"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "research": {"provider": "cursor"}}),
            Err("research.provider"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "research": {"cache_minutes": 0}}),
            Err("research.cache_minutes"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "executor": "task"}),
            Err("executor"),
        ),
        (
            json!({"task": goal, "provider": {"name": "claude"}, "executor": "run"}),
            Ok("claude"),
        ),
    ];
    for (input, expected) in cases {
        check(input, expected);
    }
}

#[test]
fn unknown_keys_are_refused_by_the_reader() {
    for input in [
        json!({"task": {"goal": "g", "extra": 1}, "provider": {"name": "claude"}}),
        json!({"task": {"goal": "g"}, "provider": {"name": "claude", "modle": "x"}}),
        json!({"task": {"goal": "g"}, "provider": {"name": "claude"}, "safety": {"max_iteration": 3}}),
        json!({"task": {"goal": "g"}, "provider": {"name": "claude"}, "sefety": {}}),
        json!({"task": {"goal": "g"}, "provider": {"name": "claude"}, "executor": "pipeline"}),
    ] {
        let err = serde_json::from_value::<RawAutoConfig>(input.clone()).unwrap_err();
        assert!(err.to_string().contains("unknown"), "{input}: {err}");
    }
}

#[test]
fn defaults_fill_what_the_file_leaves_out() {
    let c = super::config(json!({"task": {"goal": "g"}, "provider": {"name": "codex"}}));
    assert_eq!(c.safety.max_iterations, 10);
    assert_eq!(c.safety.emergency_stop_file, "EMERGENCY_STOP");
    assert_eq!(c.research.cache_minutes, 60);
    assert_eq!(c.research_provider(), "codex");
    assert_eq!(c.max_duration_ms(), 8 * 3_600_000);
}
