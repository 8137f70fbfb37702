//! The resume-cost group: a resumed run reports its own usage and cost, not the session's
//! running total (issue 20), for every real CLI.
//!
//! Each case has a fake model of its own (the `resume` scenario) whose request log records
//! the usage each response reported. Two runs in one session, then:
//! - the resumed run's usage equals what was served to that run alone (exact);
//! - its cost equals the same tokens at the first run's price per token (within 2%);
//! - the session's running total, where the CLI gives one, is apart (`session_*`).
//!
//! Once with a session started by forge (all three CLIs), once (claude, codex) with a session
//! started by the CLI itself in the home forge then resumes it from.
//!
//! And codex's cost out of the box (issue 27): with no model in forge's configuration, the
//! model comes from the `config.toml` of the user's `CODEX_HOME` — priced when the table has
//! it, named as the one the table lacks when it does not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use forge_adapter_fakemodel::{LoggedRequest, Scenario, ServedUsage};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{CaseDir, Run, Suite, prepare, run_forge};
use super::cases::{self, Expect};
use super::summary::Verdict;
use super::{Ctx, ServerProcess, pool, say};

const SCENARIO: &str = "resume";
const TIMEOUT: Duration = Duration::from_secs(90);

/// Who started the session that forge resumes, or (`ConfigModel`) no resume: one codex run
/// whose model only its own config names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Forge,
    Cli,
    ConfigModel,
}

/// The fake-model scenario it drives (`-s resume` selects it).
pub fn scenarios() -> Vec<&'static str> {
    vec![SCENARIO]
}

/// Every case of the group for the selected providers, run side by side.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut cases = Vec::new();
    for &provider in &ctx.providers {
        cases.push((provider, Start::Forge));
        if provider != "gemini" {
            cases.push((provider, Start::Cli));
        }
        if provider == "codex" {
            cases.push((provider, Start::ConfigModel));
        }
    }
    let jobs = cases.len();
    Ok(pool::run_all(
        "resume_cost",
        cases,
        jobs,
        |(provider, start)| {
            let case = match start {
                Start::Forge => "resume_cost",
                Start::Cli => "resume_cost_cli_session",
                Start::ConfigModel => "cost_from_cli_config",
            };
            Verdict::run(case, provider, |verdict| {
                verdict.failures = match start {
                    Start::ConfigModel => run_config_model_case(&ctx.suite, provider),
                    _ => run_case(&ctx.suite, provider, start),
                }?;
                Ok(())
            })
        },
    ))
}

fn run_case(suite: &Suite, provider: &'static str, start: Start) -> anyhow::Result<Vec<String>> {
    let kind = match start {
        Start::Forge => "forge",
        Start::Cli => "cli",
        Start::ConfigModel => "config",
    };
    let suite = Suite {
        work: suite.work.join(kind),
        capture: false,
        ..suite.clone()
    };
    std::fs::create_dir_all(&suite.work)?;
    let log = suite.work.join(format!("{provider}.requests.jsonl"));
    let server = ServerProcess::start(&suite.forge, SCENARIO, &log)?;
    let expect = cases::all()
        .into_iter()
        .find(|e| e.scenario == SCENARIO)
        .context("resume expectations")?;
    let prompts = Scenario::builtin(SCENARIO)?.prompts;
    let (first_prompt, second_prompt) = match prompts.as_slice() {
        [a, b, ..] => (a.clone(), b.clone()),
        _ => bail!("the resume scenario has fewer than two prompts"),
    };
    let mut case = prepare(&suite, &expect, provider, &server.base_url)?;

    // The first run: through forge, or the CLI itself in the home forge will resume from.
    let (session, first_cost, first_usage) = match start {
        Start::Forge => {
            let first = run_forge(&suite, &case, &first_prompt, None, TIMEOUT)?;
            ensure_success(&first, "first run")?;
            let session = first
                .str_at("/metadata/session_id")
                .context("the first run has no session id")?
                .to_owned();
            let cost = first.result.as_ref().and_then(cost_of);
            let usage = first.result.as_ref().map(usage_of);
            (session, cost, usage)
        }
        Start::Cli | Start::ConfigModel => {
            let home = case.root.join("home");
            use_fixed_home(&mut case, &suite, &server, &expect, &home)?;
            (run_cli(&case, &home, &first_prompt)?, None, None)
        }
    };
    let served_before = read_log(&log)?.len();

    let second = run_forge(&suite, &case, &second_prompt, Some(&session), TIMEOUT)?;
    ensure_success(&second, "resumed run")?;
    let result = second.result.as_ref().context("no result")?;
    let log_entries = read_log(&log)?;
    let served = served_to(
        provider,
        log_entries.get(served_before..).unwrap_or_default(),
    );
    let served_first = served_to(
        provider,
        log_entries.get(..served_before).unwrap_or_default(),
    );

    let mut failures = Vec::new();
    let usage = usage_of(result);
    say(&format!(
        "resume_cost {provider} ({kind}-started session): resumed run {} in / {} out, served {} in / {} out; cost {:?} (first run {first_cost:?}); session {:?} in, ${:?}",
        usage.input_tokens,
        usage.output_tokens,
        served.input_tokens,
        served.output_tokens,
        cost_of(result),
        result.pointer("/metadata/session_usage/input_tokens"),
        result.pointer("/metadata/session_cost_usd"),
    ));
    if (usage.input_tokens, usage.output_tokens) != (served.input_tokens, served.output_tokens) {
        failures.push(format!(
            "usage {} in / {} out, served to the resumed run {} in / {} out",
            usage.input_tokens, usage.output_tokens, served.input_tokens, served.output_tokens
        ));
    }
    // The price per token: the first run's (forge-started) or, for a session forge did not
    // start, the resumed run's own figure must still be there and not the running total.
    let cost = cost_of(result);
    match (start, first_cost, first_usage, cost) {
        (Start::Forge, Some(c1), Some(u1), Some(c2)) => {
            let want = c1 * weight(&usage) / weight(&u1).max(1.0);
            if (c2 - want).abs() > 0.02 * want + 1e-9 {
                failures.push(format!(
                    "cost ${c2:.6}, the same tokens at the first run's price ${want:.6}"
                ));
            }
        }
        (_, _, _, None) => failures.push(format!(
            "no cost for the resumed run (model {:?})",
            result.pointer("/metadata/model")
        )),
        (Start::Forge, ..) => failures.push("no cost for the first run".into()),
        (Start::Cli | Start::ConfigModel, ..) => {}
    }
    // The CLI's running totals, where it gives them, sit apart and cover both runs.
    if let Some(total) = result
        .pointer("/metadata/session_usage/input_tokens")
        .and_then(Value::as_u64)
    {
        let both = served.input_tokens + served_first.input_tokens;
        if provider == "codex" && total != both {
            failures.push(format!(
                "session_usage {total} in, served to both runs {both} in"
            ));
        }
    } else if provider != "gemini" {
        failures.push("no session_usage beside the resumed run's usage".into());
    }
    if let (Some(total), Some(c2)) = (
        result
            .pointer("/metadata/session_cost_usd")
            .and_then(Value::as_f64),
        cost,
    ) {
        if total < c2 {
            failures.push(format!(
                "session_cost_usd ${total:.6} below the run's ${c2:.6}"
            ));
        }
    }
    Ok(failures)
}

/// A codex run with no model in forge's configuration: forge.toml names none, the user's
/// `CODEX_HOME/config.toml` (the template each private home copies) does. Run twice: with the
/// shipped table's model (an estimated cost) and with one the table lacks (no cost, the
/// model named, and the human footer saying which price is missing).
fn run_config_model_case(suite: &Suite, provider: &'static str) -> anyhow::Result<Vec<String>> {
    let suite = Suite {
        work: suite.work.join("config"),
        capture: false,
        ..suite.clone()
    };
    std::fs::create_dir_all(&suite.work)?;
    let log = suite.work.join(format!("{provider}.requests.jsonl"));
    let server = ServerProcess::start(&suite.forge, SCENARIO, &log)?;
    let expect = cases::all()
        .into_iter()
        .find(|e| e.scenario == SCENARIO)
        .context("resume expectations")?;
    let prompt = Scenario::builtin(SCENARIO)?
        .prompts
        .first()
        .cloned()
        .context("the resume scenario has no prompt")?;
    let mut case = prepare(&suite, &expect, provider, &server.base_url)?;
    case.offline.model = None;
    std::fs::write(
        case.workspace.join("forge.toml"),
        case.offline.project_toml(),
    )?;
    let config = case.root.join("codex-template/config.toml");
    let text = std::fs::read_to_string(&config).context("the codex template config")?;
    let named = format!("model = \"{}\"", offline::CODEX_MODEL);
    anyhow::ensure!(
        text.contains(&named),
        "the template config names no model: {text}"
    );

    let mut failures = Vec::new();
    let priced = run_forge(&suite, &case, &prompt, None, TIMEOUT)?;
    ensure_success(&priced, "the run with the config's model")?;
    let result = priced.result.as_ref().context("no result")?;
    let (model, cost) = (priced.str_at("/metadata/model"), cost_of(result));
    say(&format!(
        "cost_from_cli_config codex: model {model:?} from config.toml, cost {cost:?}"
    ));
    if model != Some(offline::CODEX_MODEL) {
        failures.push(format!(
            "model {model:?}, config.toml says {}",
            offline::CODEX_MODEL
        ));
    }
    if cost.is_none_or(|c| c <= 0.0) {
        failures.push(format!(
            "no estimated cost with the config's model ({cost:?})"
        ));
    }
    if result
        .pointer("/metadata/cost_source")
        .and_then(Value::as_str)
        != Some("estimated")
    {
        failures.push("the cost is not marked estimated".into());
    }

    // A model the shipped table lacks: named, never priced.
    std::fs::write(&config, text.replace(&named, "model = \"mystery-model\""))?;
    let unpriced = run_forge(&suite, &case, &prompt, None, TIMEOUT)?;
    let model = unpriced.str_at("/metadata/model");
    let cost = unpriced.result.as_ref().and_then(cost_of);
    say(&format!(
        "cost_from_cli_config codex: model {model:?} (not in the table), cost {cost:?}, status {:?}",
        unpriced.str_at("/status")
    ));
    if model != Some("mystery-model") || cost.is_some() {
        failures.push(format!(
            "with a model the table lacks: model {model:?}, cost {cost:?} (want mystery-model, none)"
        ));
    }
    Ok(failures)
}

fn ensure_success(run: &Run, what: &str) -> anyhow::Result<()> {
    if run.str_at("/status") != Some("success") {
        bail!(
            "{what}: status {:?}: {}",
            run.str_at("/status"),
            run.stderr.lines().last().unwrap_or_default()
        );
    }
    Ok(())
}

/// The requests whose usage the provider's result counts: claude's `usage` and codex's
/// thread total count the turns; gemini's stats every model call (router included).
fn served_to(provider: &str, entries: &[LoggedRequest]) -> ServedUsage {
    let mut sum = ServedUsage::default();
    for entry in entries {
        let counted = provider == "gemini" || entry.side_call.is_none();
        if let (true, Some(u)) = (counted, entry.usage) {
            sum.input_tokens += u.input_tokens;
            sum.output_tokens += u.output_tokens;
        }
    }
    sum
}

fn read_log(path: &Path) -> anyhow::Result<Vec<LoggedRequest>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).context("a request log line"))
        .collect()
}

/// A result's `usage` (the counters this group compares).
#[derive(Debug, Default, Clone, Copy)]
struct Tokens {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
}

fn usage_of(result: &Value) -> Tokens {
    let at = |key: &str| {
        result
            .pointer(&format!("/metadata/usage/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Tokens {
        input_tokens: at("input_tokens"),
        output_tokens: at("output_tokens"),
        cache_read_tokens: at("cache_read_tokens"),
        cache_write_tokens: at("cache_write_tokens"),
    }
}

fn cost_of(result: &Value) -> Option<f64> {
    result.pointer("/metadata/cost_usd").and_then(Value::as_f64)
}

/// Tokens in input-token equivalents (output 5×, cache reads 0.1×, cache writes 1.25×): the
/// fake model's answers are nearly all input, so the ratio between the classes barely moves
/// the comparison, while a running total would double it.
fn weight(u: &Tokens) -> f64 {
    u.input_tokens as f64
        + 5.0 * u.output_tokens as f64
        + 0.1 * u.cache_read_tokens as f64
        + 1.25 * u.cache_write_tokens as f64
}

/// Points the case's `forge.toml` at a fixed CLI home (no private per-run home), where the
/// CLI's own first run leaves its session.
fn use_fixed_home(
    case: &mut CaseDir,
    suite: &Suite,
    server: &ServerProcess,
    _expect: &Expect,
    home: &Path,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(home)?;
    let mut offline = offline::configure(
        case.offline.provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Fixed(home.to_path_buf()),
    )?;
    offline.isolate_home = false;
    offline.copy_user_auth = false;
    offline.home = Some(home.to_path_buf());
    std::fs::write(case.workspace.join("forge.toml"), offline.project_toml())?;
    case.offline = offline;
    Ok(())
}

/// The CLI run by hand, as a user would, in `home`; returns the session it started.
fn run_cli(case: &CaseDir, home: &Path, prompt: &str) -> anyhow::Result<String> {
    let mut command = Command::new(&case.offline.binary);
    command
        .current_dir(&case.workspace)
        .envs(&case.offline.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let key = match case.offline.provider {
        "claude" => {
            command
                .args(["-p", "--output-format", "stream-json", "--verbose"])
                .arg("--dangerously-skip-permissions")
                .env("HOME", home)
                .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
                .env("IS_SANDBOX", "1");
            "/session_id"
        }
        _ => {
            command
                .args([
                    "exec",
                    "--json",
                    "--dangerously-bypass-approvals-and-sandbox",
                ])
                .args(["-m", offline::CODEX_MODEL, "-C"])
                .arg(&case.workspace)
                .arg("-")
                .env("CODEX_HOME", codex_home(home));
            "/thread_id"
        }
    };
    let mut child = command.spawn().context("spawning the CLI")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(prompt.as_bytes())?;
    }
    let output = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let session = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.pointer(key).and_then(Value::as_str).map(str::to_owned));
    session.with_context(|| {
        format!(
            "the CLI's own run named no session (exit {:?}): {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn codex_home(home: &Path) -> PathBuf {
    home.join(".codex")
}
