//! The retry-events group: every real CLI's retry after the fake model's rate limit reaches
//! forge's event stream as a `retry` event (gemini prints its retries on stderr only), read
//! from the bundles the `rate_limit_then_success` cases just wrote.

use serde_json::Value;

use super::case_run::{Suite, run_dirs};
use super::{Outcome, say};

const SCENARIO: &str = "rate_limit_then_success";

/// One outcome per provider whose `rate_limit_then_success` case ran in this suite.
pub(super) fn check(suite: &Suite, ran: &[(&'static str, &'static str)]) -> Vec<Outcome> {
    ran.iter()
        .filter(|(scenario, _)| *scenario == SCENARIO)
        .map(|&(_, provider)| {
            let workspace = suite.work.join(SCENARIO).join(provider).join("ws");
            let mut failures = Vec::new();
            let retries: Vec<Value> = run_dirs(&workspace)
                .iter()
                .flat_map(|dir| {
                    std::fs::read_to_string(dir.join("events.jsonl"))
                        .unwrap_or_default()
                        .lines()
                        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                        .collect::<Vec<_>>()
                })
                .filter(|e| e["type"] == "retry")
                .collect();
            if retries.is_empty() {
                failures.push("no retry event in the bundle's events.jsonl".to_owned());
            }
            say(&format!(
                "{:<24} {provider:<7} {}",
                "retry_events",
                if failures.is_empty() { "ok" } else { "FAILED" }
            ));
            Outcome {
                scenario: "retry_events",
                provider,
                status: if failures.is_empty() { "ok" } else { "failed" }.into(),
                seconds: 0.0,
                failures,
                recorded: None,
            }
        })
        .collect()
}
