//! `--on-rate-limit wait` with a real CLI: the fake model answers 429 "try again in 3s"
//! more times than the CLI retries, so the CLI gives up; forge waits for the reset, resumes
//! the session, and the run succeeds with the wait recorded.
//!
//! Claude only for now. Codex reports an HTTP 429 as "exceeded retry limit, last status: 429"
//! without the body, so the reset never reaches forge (the fake model would have to send
//! `response.failed` with `rate_limit_exceeded` instead); Gemini retries ten times with its
//! own backoff (≈ 4 min) before it gives up, too slow for this suite.

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use super::case_run::{Suite, isolate_env, prepare};
use super::cases;
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, say};

const SCENARIO: &str = "rate_limit_reset";
/// The CLIs whose rate-limit report carries its reset time through to forge (see above).
const COVERED: [&str; 1] = ["claude"];
const ANSWER: &str = "Hello after waiting out a rate limit.";
/// Long enough for the CLI's own retries, one wait and the resumed run.
const TIMEOUT: Duration = Duration::from_secs(150);

/// Failures before the turn is served: past the CLI's own retries (claude 2), so the CLI
/// reports the limit and ends.
fn failures(provider: &str) -> u32 {
    match provider {
        "gemini" => 10,
        "codex" => 6,
        _ => 3,
    }
}

fn scenario(times: u32) -> String {
    format!(
        "name = \"{SCENARIO}\"\n\
         description = \"HTTP 429 with a reset time, more often than the CLI retries, then an answer.\"\n\
         prompts = [\"Say hello.\"]\n\n\
         [[turns]]\n\
         text = \"{ANSWER}\"\n\
         fail = {{ status = 429, times = {times}, message = \"rate limit reached, please try again in 3s\" }}\n"
    )
}

/// Its own scenario's name (`-s rate_limit_reset` selects it).
pub fn scenarios() -> Vec<&'static str> {
    vec![SCENARIO]
}

/// The case for each selected provider it covers.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for provider in COVERED {
        if !ctx.providers.contains(&provider) {
            continue;
        }
        let started = std::time::Instant::now();
        let outcome = run_one(&ctx.suite, provider);
        say(&format!(
            "{SCENARIO:<24} {provider:<7} {}",
            match &outcome {
                Ok(()) => "ok".to_owned(),
                Err(e) => format!("FAILED: {e:#}"),
            }
        ));
        verdicts.push(Verdict {
            seconds: started.elapsed().as_secs_f64(),
            ..Verdict::of(SCENARIO, provider, outcome)
        });
    }
    Ok(verdicts)
}

fn run_one(suite: &Suite, provider: &'static str) -> anyhow::Result<()> {
    let dir = suite.work.join(SCENARIO);
    std::fs::create_dir_all(&dir)?;
    let scenario_file = dir.join(format!("{provider}.toml"));
    std::fs::write(&scenario_file, scenario(failures(provider)))?;
    // A server per provider: the failures are counted per server.
    let server = ServerProcess::start(
        &suite.forge,
        &scenario_file.display().to_string(),
        &dir.join(format!("{provider}.requests.jsonl")),
    )?;
    let mut expect = cases::all()
        .into_iter()
        .next()
        .context("a case to borrow the shape of")?;
    expect.scenario = SCENARIO;
    let case = prepare(suite, &expect, provider, &server.base_url)?;

    let mut command = Command::new(&suite.forge);
    command
        .arg("run")
        .args(["--provider", provider, "--workdir"])
        .arg(&case.workspace)
        .args([
            "--json",
            "--permission-mode",
            "bypass",
            "--on-rate-limit",
            "wait",
        ])
        .args(["--timeout", &TIMEOUT.as_secs().to_string(), "Say hello."])
        .stdin(Stdio::null());
    isolate_env(&mut command, suite);
    command.envs(&case.offline.process_env);
    let output = command.output().context("running forge-code-agent")?;
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "no JSON result; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let waits = result["metadata"]["rate_limit_waits"]
        .as_array()
        .map_or(0, Vec::len);
    let content = result["content"].as_str().unwrap_or_default();
    anyhow::ensure!(
        result["status"] == "success" && content.contains(ANSWER) && waits >= 1,
        "status {}, {waits} waits, content {content:?}, errors {}, notes {}",
        result["status"],
        result["errors"],
        result["metadata"]["notes"]
    );
    Ok(())
}
