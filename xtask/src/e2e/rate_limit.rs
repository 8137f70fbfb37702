//! `--on-rate-limit wait` with a real CLI: the fake model reports a rate limit that resets
//! in 3 s more times than the CLI retries, so the CLI gives up; forge waits for the reset,
//! resumes the same session, and the run succeeds with the wait recorded (in the result's
//! `metadata.rate_limit_waits` and as a `rate_limit_wait` event in a bundle).
//!
//! Claude gets HTTP 429 "try again in 3s". Codex gets the limit the way the Responses API
//! reports it mid-stream, `response.failed` with code `rate_limit_exceeded` and "Please try
//! again in 3s." (fake model `fail.in_stream`): codex 0.169 honours that delay in its own
//! retries, then ends with `turn.failed` "rate limit exceeded: <message>". An HTTP 429 would
//! not do: codex maps it to "exceeded retry limit, last status: 429" and drops the body
//! (openai/codex codex-rs/core/src/api_bridge.rs `map_api_error`), so no reset reaches forge.
//! Gemini gets HTTP 429 too; its own retries (by default ten, with a backoff from 5 s to
//! 30 s: ≈ 4 min) are bounded by the user's `general.maxAttempts = 2` setting, which the
//! run's private home copies (`copy_user_auth`). It prints `[API Error: <message>]`, so the
//! reset is the message's. Gemini takes the refused prompt back out of its chat record, so
//! a new session whose only prompt failed has nothing to resume: the adapter reports no
//! session and forge starts the request over (a session with content is resumed).

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use super::case_run::{CaseDir, Suite, isolate_env, prepare, run_dirs};
use super::cases;
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, say};

const SCENARIO: &str = "rate_limit_reset";
/// The CLIs whose rate-limit report carries its reset time through to forge (see above).
const COVERED: [&str; 3] = ["claude", "codex", "gemini"];
const ANSWER: &str = "Hello after waiting out a rate limit.";
/// Long enough for the CLI's own retries, one wait and the resumed run.
const TIMEOUT: Duration = Duration::from_secs(150);

/// Failures before the turn is served: one attempt plus the CLI's own retries (claude 2;
/// codex 2, `stream_max_retries` in the e2e config), so the CLI reports the limit and ends,
/// and the resumed session is served.
fn failures(provider: &str) -> u32 {
    match provider {
        "gemini" => GEMINI_MAX_ATTEMPTS,
        _ => 3,
    }
}

/// Gemini's attempts per request in this case (its default, 10 with a backoff from 5 s to
/// 30 s, takes ≈ 4 min to give up).
const GEMINI_MAX_ATTEMPTS: u32 = 2;

/// The limit as each API words it: Claude's as an HTTP 429; codex's as the Responses API's
/// mid-stream `response.failed` (its HTTP 429 body never reaches codex's caller).
fn fail_knob(provider: &str) -> String {
    let times = failures(provider);
    match provider {
        "codex" => format!(
            "{{ status = 429, times = {times}, in_stream = true, message = \"Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 3s.\" }}"
        ),
        _ => format!(
            "{{ status = 429, times = {times}, message = \"rate limit reached, please try again in 3s\" }}"
        ),
    }
}

fn scenario(provider: &str) -> String {
    format!(
        "name = \"{SCENARIO}\"\n\
         description = \"A rate limit with a reset time, more often than the CLI retries, then an answer.\"\n\
         prompts = [\"Say hello.\"]\n\n\
         [[turns]]\n\
         text = \"{ANSWER}\"\n\
         fail = {}\n",
        fail_knob(provider)
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
    std::fs::write(&scenario_file, scenario(provider))?;
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
    let mut case = prepare(suite, &expect, provider, &server.base_url)?;
    let user_home = (provider == "gemini")
        .then(|| gemini_user_home(&mut case))
        .transpose()?;

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
    if let Some(home) = &user_home {
        command.env("HOME", home);
    }
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
    same_session_and_a_wait_event(&result, &case.workspace)
}

/// Gemini's own retries bounded by the user's `general.maxAttempts` (a gemini setting, at
/// most 10), which the run's private home copies (`copy_user_auth`): a home of this case's
/// own, since the suite's is shared.
fn gemini_user_home(case: &mut CaseDir) -> anyhow::Result<std::path::PathBuf> {
    let home = case.root.join("user-home");
    std::fs::create_dir_all(home.join(".gemini"))?;
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": GEMINI_MAX_ATTEMPTS},
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string())?;
    case.offline.copy_user_auth = true;
    std::fs::write(
        case.workspace.join("forge.toml"),
        case.offline.project_toml(),
    )?;
    Ok(home)
}

/// The run that hit the limit and the resumed one share the CLI's session (unless the CLI kept
/// none to resume), and a bundle holds the `rate_limit_wait` event.
fn same_session_and_a_wait_event(
    result: &serde_json::Value,
    workspace: &std::path::Path,
) -> anyhow::Result<()> {
    let limited_run = result["metadata"]["rate_limit_waits"][0]["run_id"]
        .as_str()
        .context("the wait names the run that hit the limit")?;
    let dirs = run_dirs(workspace);
    let limited = dirs
        .iter()
        .find(|dir| dir.ends_with(limited_run))
        .with_context(|| format!("no bundle for the limited run {limited_run}"))?;
    let limited_result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(limited.join("result.json"))?)?;
    let session = &result["metadata"]["session_id"];
    let limited_session = &limited_result["metadata"]["session_id"];
    if limited_session.is_null() {
        // Gemini keeps no session whose only prompt failed: the run started over.
        let notes = limited_result["metadata"]["notes"].to_string();
        anyhow::ensure!(
            notes.contains("nothing to resume"),
            "the limited run has no session and says not why: {notes}"
        );
    } else {
        anyhow::ensure!(
            session.is_string() && limited_session == session,
            "the resumed run's session {session} is not the limited run's {limited_session}"
        );
    }
    let wait_events = dirs
        .iter()
        .map(|dir| {
            std::fs::read_to_string(dir.join("events.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter(|line| line.contains("\"rate_limit_wait\""))
                .count()
        })
        .sum::<usize>();
    anyhow::ensure!(
        wait_events >= 1,
        "no rate_limit_wait event in the {} bundles",
        dirs.len()
    );
    Ok(())
}
