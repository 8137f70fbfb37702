//! `cargo xtask e2e`: every built-in fake-model scenario × every provider, through the real
//! pinned CLIs and the real `forge-code-agent run` binary, offline.
//!
//! 1. the pinned CLIs are installed into `target/e2e/clis` (skipped when present);
//! 2. `forge-code-agent` is built;
//! 3. one `forge-code-agent fake-model serve` per scenario (the server keeps the providers'
//!    conversations apart);
//! 4. each case gets `target/e2e/work/<scenario>/<provider>/ws` with a `forge.toml` that
//!    points the provider at the server ([`forge_cli::offline`]), and runs
//!    `forge-code-agent run --json` there, `--jobs` cases at a time;
//! 5. the `ExecutionResult`, the workspace and the artifact bundle are checked
//!    ([`check`]), and a table scenario × provider → status, seconds is printed.
//!
//! `--record` also refreshes `adapters/testkit/fixtures/` from the passing runs ([`record`]).

pub mod api;
pub mod auto;
pub mod capture;
pub mod case_run;
pub mod cases;
mod check;
pub mod delivery;
mod demo;
mod install;
mod mcp;
mod rate_limit;
mod receiver;
mod record;
mod resume_cost;
mod retry_events;
mod server;
pub mod task;
mod web;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use forge_adapter_fakemodel::Scenario;
use forge_cli::offline::PinnedCli;

pub use case_run::{CaseDir, Run, Suite, isolate_env, prepare, run_forge};
pub use cases::{Expect, PROVIDERS};
pub use server::ServerProcess;

use crate::workspace_root;

#[derive(Debug, Clone, clap::Args)]
pub struct E2eArgs {
    /// Also refresh adapters/testkit/fixtures/<cli>/<version>/<scenario>.* from the runs
    #[arg(long)]
    pub record: bool,
    /// Only this provider (repeatable): claude, codex, gemini
    #[arg(long, short = 'p', value_name = "P")]
    pub provider: Vec<String>,
    /// Only this built-in scenario, or `auto` / one `auto_*` loop case (repeatable)
    #[arg(long, short = 's', value_name = "S")]
    pub scenario: Vec<String>,
    /// Only these groups: cases (scenario × provider), serve (the HTTP API), web (the page in
    /// Chromium) [default: all; only cases when -s is given]
    #[arg(long, value_name = "G")]
    pub group: Vec<String>,
    /// Cases run at the same time
    #[arg(long, short = 'j', value_name = "N", default_value_t = 4)]
    pub jobs: usize,
}

/// One case's verdict.
#[derive(Debug)]
struct Outcome {
    scenario: &'static str,
    provider: &'static str,
    status: String,
    seconds: f64,
    failures: Vec<String>,
    recorded: Option<PathBuf>,
}

pub fn run(args: &E2eArgs) -> anyhow::Result<()> {
    delivery::run_all(args, |a| task::run_all(a, |a| auto::run_all(a, run_cases)))
}

fn run_cases(args: &E2eArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let root = workspace_root();
    let suite = setup(&root, args.record, "work", false)?;
    if !group_selected(args, "cases") {
        return run_groups(&suite, args);
    }
    let expects = select(args)?;

    let mut servers = BTreeMap::new();
    for expect in &expects {
        let log = suite
            .work
            .join(format!("{}.requests.jsonl", expect.scenario));
        let server = ServerProcess::start(&suite.forge, expect.scenario, &log)?;
        servers.insert(expect.scenario, server);
    }
    let mut queue: VecDeque<(Expect, &'static str)> = VecDeque::new();
    for expect in &expects {
        for provider in PROVIDERS {
            if args.provider.is_empty() || args.provider.iter().any(|p| p == provider) {
                queue.push_back((expect.clone(), provider));
            }
        }
    }
    // The slowest cases first, so they do not trail at the end.
    queue.make_contiguous().sort_by_key(|(e, p)| {
        std::cmp::Reverse((e.ending == cases::Ending::ClearError, *p == "gemini"))
    });
    say(&format!(
        "{} cases, {} at a time",
        queue.len(),
        args.jobs.max(1)
    ));

    let servers = Arc::new(servers);
    let queue = Arc::new(Mutex::new(queue));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..args.jobs.max(1))
        .map(|_| {
            let (suite, servers, queue, outcomes, root) = (
                suite.clone(),
                Arc::clone(&servers),
                Arc::clone(&queue),
                Arc::clone(&outcomes),
                root.clone(),
            );
            std::thread::spawn(move || {
                loop {
                    let next = queue.lock().map(|mut q| q.pop_front()).ok().flatten();
                    let Some((expect, provider)) = next else {
                        return;
                    };
                    let Some(server) = servers.get(expect.scenario) else {
                        continue;
                    };
                    let outcome = run_case(&suite, &root, &expect, provider, server);
                    say(&format!(
                        "{:<24} {:<7} {} ({:.1}s)",
                        outcome.scenario,
                        outcome.provider,
                        if outcome.failures.is_empty() {
                            "ok"
                        } else {
                            "FAILED"
                        },
                        outcome.seconds
                    ));
                    if let Ok(mut all) = outcomes.lock() {
                        all.push(outcome);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    drop(servers);
    let mut outcomes = Arc::try_unwrap(outcomes)
        .ok()
        .and_then(|m| m.into_inner().ok())
        .unwrap_or_default();
    let ran: Vec<_> = outcomes.iter().map(|o| (o.scenario, o.provider)).collect();
    outcomes.extend(retry_events::check(&suite, &ran));
    if args.scenario.is_empty() || args.scenario.iter().any(|s| s == "resume") {
        outcomes.extend(resume_cost::run(&suite, &args.provider));
    }
    let cases = report(
        &expects,
        &outcomes,
        started.elapsed().as_secs_f64(),
        args.jobs,
    );
    cases.and(run_groups(&suite, args))
}

/// `--group` names it; with none, every group (only the cases when `-s` narrows them).
fn group_selected(args: &E2eArgs, group: &str) -> bool {
    if args.group.is_empty() {
        return group == "cases" || args.scenario.is_empty();
    }
    args.group.iter().any(|g| g == group)
}

/// The groups beside the scenario cases, each in its own file.
fn run_groups(suite: &Suite, args: &E2eArgs) -> anyhow::Result<()> {
    let providers: Vec<&'static str> = PROVIDERS
        .iter()
        .copied()
        .filter(|p| args.provider.is_empty() || args.provider.iter().any(|a| a == p))
        .collect();
    let mut failed = Vec::new();
    if group_selected(args, "serve") {
        if let Err(e) = api::run(suite, &providers) {
            failed.push(format!("{e:#}"));
        }
    }
    if group_selected(args, "web") {
        if let Err(e) = web::run(suite) {
            failed.push(format!("web group: {e:#}"));
        }
    }
    if group_selected(args, "mcp") {
        if let Err(e) = mcp::run(suite, args) {
            failed.push(format!("mcp group: {e:#}"));
        }
    }
    if group_selected(args, "rate_limit") {
        failed.extend(rate_limit::run(suite, &args.provider)?);
    }
    if group_selected(args, "demo") {
        failed.extend(demo::run(suite, &providers)?);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        bail!("{}", failed.join("\n"))
    }
}

/// Installs the CLIs, builds the binary (`release`: optimised, for measurements), and clears
/// `target/e2e/<work>`.
pub fn setup(root: &Path, capture: bool, work: &str, release: bool) -> anyhow::Result<Suite> {
    let e2e = root.join("target/e2e");
    let clis = std::env::var_os("FORGE_E2E_CLIS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| e2e.join("clis"));
    install::ensure(&clis)?;
    let mut build = vec!["build", "-p", "forge-cli"];
    if release {
        build.push("--release");
    }
    say(&format!("cargo {}", build.join(" ")));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(&build)
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo {} failed ({status})", build.join(" "));
    }
    let work = e2e.join(work);
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work)?;
    let empty_config = e2e.join("empty-user-config.toml");
    std::fs::write(&empty_config, "")?;
    let home = work.join("user-home");
    std::fs::create_dir_all(&home)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(Suite {
        forge: target
            .join(if release { "release" } else { "debug" })
            .join("forge-code-agent"),
        clis,
        work,
        empty_config,
        home,
        capture,
    })
}

fn select(args: &E2eArgs) -> anyhow::Result<Vec<Expect>> {
    for p in &args.provider {
        if !PROVIDERS.contains(&p.as_str()) {
            bail!("unknown provider {p:?}: claude, codex or gemini");
        }
    }
    let all = cases::all();
    for s in &args.scenario {
        if !all.iter().any(|e| e.scenario == s) && !mcp::owns(s) {
            bail!(
                "unknown scenario {s:?}: {}",
                Scenario::builtin_names().join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| args.scenario.is_empty() || args.scenario.iter().any(|s| s == e.scenario))
        .collect())
}

fn run_case(
    suite: &Suite,
    root: &Path,
    expect: &Expect,
    provider: &'static str,
    server: &ServerProcess,
) -> Outcome {
    let mut outcome = Outcome {
        scenario: expect.scenario,
        provider,
        status: "-".into(),
        seconds: 0.0,
        failures: Vec::new(),
        recorded: None,
    };
    let scenario = Scenario::builtin(expect.scenario).ok();
    let prompts = scenario
        .as_ref()
        .map(|s| s.prompts.clone())
        .unwrap_or_default();
    let description = scenario
        .as_ref()
        .and_then(|s| s.description.clone())
        .unwrap_or_default();
    let case = match prepare(suite, expect, provider, &server.base_url) {
        Ok(case) => case,
        Err(e) => {
            outcome.failures.push(format!("setup: {e:#}"));
            return outcome;
        }
    };
    let mut prompt = prompts.first().cloned().unwrap_or_default();
    let mut last = match run_forge(suite, &case, &prompt, None, expect.timeout) {
        Ok(run) => run,
        Err(e) => {
            outcome.failures.push(format!("run: {e:#}"));
            return outcome;
        }
    };
    outcome.seconds = last.seconds;
    outcome.failures = check::run(expect, provider, &last, expect.text, &case.workspace);
    if let Some(resume_text) = expect.resume_text {
        let first_session = last.str_at("/metadata/session_id").map(str::to_owned);
        prompt = prompts.get(1).cloned().unwrap_or_default();
        match first_session {
            None => outcome
                .failures
                .push("resume: the first run has no session id".into()),
            Some(session) => match run_forge(suite, &case, &prompt, Some(&session), expect.timeout)
            {
                Ok(second) => {
                    outcome.seconds += second.seconds;
                    for f in check::run(
                        expect,
                        provider,
                        &second,
                        Some(resume_text),
                        &case.workspace,
                    ) {
                        outcome.failures.push(format!("resumed run: {f}"));
                    }
                    let again = second.str_at("/metadata/session_id");
                    if provider != "gemini" && again != Some(session.as_str()) {
                        outcome.failures.push(format!(
                            "resumed run: session {again:?}, expected {session:?}"
                        ));
                    }
                    last = second;
                }
                Err(e) => outcome.failures.push(format!("resumed run: {e:#}")),
            },
        }
    }
    outcome.status = status_of(&last);
    if suite.capture && outcome.failures.is_empty() && expect.ending == cases::Ending::Success {
        outcome.recorded = record_case(
            root,
            expect,
            provider,
            &prompt,
            &description,
            &case,
            &last,
            server,
            suite,
        )
        .unwrap_or_else(|e| {
            say(&format!("record {}/{provider}: {e:#}", expect.scenario));
            None
        });
    }
    outcome
}

#[expect(
    clippy::too_many_arguments,
    reason = "a flat hand-off of one case's facts"
)]
fn record_case(
    root: &Path,
    expect: &Expect,
    provider: &str,
    prompt: &str,
    description: &str,
    case: &CaseDir,
    run: &Run,
    server: &ServerProcess,
    suite: &Suite,
) -> anyhow::Result<Option<PathBuf>> {
    let cli = PinnedCli::of(provider).context("unknown provider")?;
    if record::adapter_keeps_own(root, &cli, expect.scenario) {
        return Ok(None);
    }
    let rec = record::Recording {
        expect,
        provider,
        prompt,
        description,
        case,
        run,
        port: server.port(),
        clis: &suite.clis,
    };
    record::write(root, &rec).map(Some)
}

/// `success` / `error` / `partial`, or `timeout` when forge stopped the run (exit 124).
fn status_of(run: &Run) -> String {
    if run.exit == Some(124) {
        return "timeout".into();
    }
    run.str_at("/status").unwrap_or("no result").to_owned()
}

fn report(expects: &[Expect], outcomes: &[Outcome], total: f64, jobs: usize) -> anyhow::Result<()> {
    let mut table = format!("\n{:<24}", "scenario");
    for p in PROVIDERS {
        table.push_str(&format!("  {p:<20}"));
    }
    table.push('\n');
    for expect in expects {
        table.push_str(&format!("{:<24}", expect.scenario));
        for p in PROVIDERS {
            let cell = outcomes
                .iter()
                .find(|o| o.scenario == expect.scenario && o.provider == p)
                .map_or_else(
                    || "-".to_owned(),
                    |o| {
                        let mark = if o.failures.is_empty() { "ok" } else { "FAIL" };
                        format!("{mark} {} {:.1}s", o.status, o.seconds)
                    },
                );
            table.push_str(&format!("  {cell:<20}"));
        }
        table.push('\n');
    }
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.failures.is_empty()).collect();
    // The closing line in the plain `N passed, N failed` form CI tooling reads.
    table.push_str(&format!(
        "\n{jobs} at a time, {total:.1}s in all\ne2e: {} passed, {} failed\n",
        outcomes.len() - failed.len(),
        failed.len()
    ));
    for o in outcomes.iter().filter_map(|o| o.recorded.as_ref()) {
        table.push_str(&format!("recorded {}\n", o.display()));
    }
    for o in &failed {
        for f in &o.failures {
            table.push_str(&format!("FAIL {} × {}: {f}\n", o.scenario, o.provider));
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(table.as_bytes());
    if failed.is_empty() {
        Ok(())
    } else {
        bail!("{} e2e case(s) failed (see above)", failed.len())
    }
}

/// Progress on stderr.
pub fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "e2e: {text}");
}
