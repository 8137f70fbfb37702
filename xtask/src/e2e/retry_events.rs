//! The retry-events group: every real CLI's retry after the fake model's rate limit reaches
//! forge's event stream as a `retry` event (gemini prints its retries on stderr only), read
//! from the bundles of the `rate_limit_then_success` cases — the cases group's, or, when that
//! group did not run the case for a provider, a run of the case made here.

use std::path::Path;

use serde_json::Value;

use super::case_run::run_dirs;
use super::summary::Verdict;
use super::{Ctx, cases, say, scenarios};

const SCENARIO: &str = "rate_limit_then_success";

/// The fake-model scenario whose runs it reads (`-s rate_limit_then_success` selects it).
pub fn scenarios() -> Vec<&'static str> {
    vec![SCENARIO]
}

/// A verdict per selected provider.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let from_cases = ctx.work_of("cases");
    let missing: Vec<&'static str> = ctx
        .providers
        .iter()
        .copied()
        .filter(|p| run_dirs(&workspace(&from_cases, p)).is_empty())
        .collect();
    let mut own_runs = Vec::new();
    if !missing.is_empty() {
        say(&format!(
            "retry_events: running {SCENARIO} for {}",
            missing.join(", ")
        ));
        let expects: Vec<_> = cases::all()
            .into_iter()
            .filter(|e| e.scenario == SCENARIO)
            .collect();
        own_runs = scenarios::run_expects(&ctx.suite, &ctx.root, &expects, &missing, ctx.jobs)?;
    }
    Ok(ctx
        .providers
        .iter()
        .map(|&provider| {
            let mut verdict = Verdict::new("retry_events", provider);
            let work = if missing.contains(&provider) {
                &ctx.suite.work
            } else {
                &from_cases
            };
            for run in own_runs.iter().filter(|v| v.provider == provider) {
                for f in &run.failures {
                    verdict.failures.push(format!("the {SCENARIO} run: {f}"));
                }
            }
            if retries(&workspace(work, provider)) == 0 {
                verdict
                    .failures
                    .push("no retry event in the bundle's events.jsonl".to_owned());
            }
            say(&format!(
                "{:<24} {provider:<7} {}",
                "retry_events",
                if verdict.passed() { "ok" } else { "FAILED" }
            ));
            verdict
        })
        .collect())
}

fn workspace(work: &Path, provider: &str) -> std::path::PathBuf {
    work.join(SCENARIO).join(provider).join("ws")
}

/// `retry` events in the workspace's bundles.
fn retries(workspace: &Path) -> usize {
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
        .count()
}
