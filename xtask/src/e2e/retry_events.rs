//! The retry-events group: every real CLI's retry after the fake model's rate limit reaches
//! forge's event stream as a `retry` event (gemini prints its retries on stderr only), read
//! from the bundles of the rate-limit cases — the cases group's, or, when that group did not
//! run a case for a provider, a run of the case made here.
//!
//! Two rate limits: a plain 429 (`rate_limit_then_success`), and one whose `RetryInfo`
//! suggests a delay (`rate_limit_retry_info`), which gemini 0.61 waits out and reports in
//! another shape (`Attempt 1 failed: …` / `Suggested retry after 1s.. Retrying after
//! 5118ms...`): its event must carry that wait.

use std::path::Path;

use serde_json::Value;

use super::case_run::run_dirs;
use super::summary::Verdict;
use super::{Ctx, cases, say, scenarios};

const SCENARIOS: [&str; 2] = ["rate_limit_then_success", "rate_limit_retry_info"];

/// The fake-model scenarios whose runs it reads (`-s <name>` selects them).
pub fn scenarios() -> Vec<&'static str> {
    SCENARIOS.to_vec()
}

/// A verdict per selected provider and scenario.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let from_cases = ctx.work_of("cases");
    let mut verdicts = Vec::new();
    for scenario in SCENARIOS.into_iter().filter(|s| ctx.scenarios.contains(s)) {
        let missing: Vec<&'static str> = ctx
            .providers
            .iter()
            .copied()
            .filter(|p| run_dirs(&workspace(&from_cases, scenario, p)).is_empty())
            .collect();
        let mut own_runs = Vec::new();
        if !missing.is_empty() {
            say(&format!(
                "retry_events: running {scenario} for {}",
                missing.join(", ")
            ));
            let expects: Vec<_> = cases::all()
                .into_iter()
                .filter(|e| e.scenario == scenario)
                .collect();
            own_runs = scenarios::run_expects(&ctx.suite, &ctx.root, &expects, &missing, ctx.jobs)?;
        }
        for &provider in &ctx.providers {
            let case = match scenario {
                "rate_limit_retry_info" => "retry_events_retry_info",
                _ => "retry_events",
            };
            let mut verdict = Verdict::new(case, provider);
            let work = if missing.contains(&provider) {
                &ctx.suite.work
            } else {
                &from_cases
            };
            for run in own_runs.iter().filter(|v| v.provider == provider) {
                for f in &run.failures {
                    verdict.failures.push(format!("the {scenario} run: {f}"));
                }
            }
            let retries = retries(&workspace(work, scenario, provider));
            match retries.first() {
                None => verdict.failures.push(format!(
                    "{scenario}: no retry event in the bundle's events.jsonl"
                )),
                Some(first) => {
                    verdict.note = format!(
                        "{} retry event(s), first: attempt {}, delay {} ms, {}",
                        retries.len(),
                        first["attempt"],
                        first["delay_ms"],
                        first["message"].as_str().unwrap_or_default()
                    );
                    // Gemini waits out the suggested delay and says how long.
                    if provider == "gemini" && scenario == "rate_limit_retry_info" {
                        let waited = first["delay_ms"].as_u64().unwrap_or(0);
                        if waited < 1_000 || first["rate_limited"] != true {
                            verdict.failures.push(format!(
                                "the suggested-delay retry: {first} (want rate_limited and a delay of at least 1000 ms)"
                            ));
                        }
                    }
                }
            }
            say(&format!(
                "{case:<24} {provider:<7} {} {}",
                if verdict.passed() { "ok" } else { "FAILED" },
                verdict.note
            ));
            verdicts.push(verdict);
        }
    }
    Ok(verdicts)
}

fn workspace(work: &Path, scenario: &str, provider: &str) -> std::path::PathBuf {
    work.join(scenario).join(provider).join("ws")
}

/// `retry` events in the workspace's bundles.
fn retries(workspace: &Path) -> Vec<Value> {
    run_dirs(workspace)
        .iter()
        .flat_map(|dir| {
            std::fs::read_to_string(dir.join("events.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .collect::<Vec<_>>()
        })
        .filter(|e| e["type"] == "retry")
        .collect()
}
