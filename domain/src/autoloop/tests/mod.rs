//! Data-driven tests of the loop's rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

mod config;
mod decide;
mod persona;
mod planner;
mod report;
mod research;

use super::config::{AutoConfig, RawAutoConfig};

pub(super) const KNOWN: [&str; 3] = ["claude", "codex", "gemini"];

/// A checked config from JSON (the YAML reader hands the same serde shapes).
pub(super) fn config(json: serde_json::Value) -> AutoConfig {
    let raw: RawAutoConfig = serde_json::from_value(json).unwrap();
    AutoConfig::from_raw(raw, "auto.yaml", &KNOWN).unwrap()
}

pub(super) fn base() -> serde_json::Value {
    serde_json::json!({
        "task": {"goal": "make the tests pass"},
        "provider": {"name": "claude"},
        "safety": {"max_iterations": 3, "max_consecutive_errors": 2, "max_duration_hours": 1.0,
                   "max_total_cost_usd": 1.0},
        "persona": {"default_persona": "engineer", "personas": [
            {"name": "engineer", "keywords": ["implement", "fix"], "instructions": "Write code."},
            {"name": "tester", "keywords": ["test", "unit test", "coverage"], "instructions": "Write tests."},
            {"name": "writer", "keywords": ["docs", "readme"], "instructions": "Write docs."}
        ]},
        "research": {"enabled": true, "cache_minutes": 10}
    })
}
