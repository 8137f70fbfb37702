//! `cargo xtask bench`: the workspace's benches, then time-to-first-event (TTFE) through
//! forge against the raw CLI, measured in the same run.
//!
//! For each provider, on the fake model's `plain_answer` scenario:
//! 1. one forge run with the CLI wrapped ([`e2e::capture`]) records the exact argv,
//!    environment and home forge gives the CLI;
//! 2. then, alternating, the raw CLI is started with exactly that invocation (prompt on
//!    stdin, as forge passes it) and `forge-code-agent stream --jsonl` with the same binary
//!    and the same home. TTFE = spawn → first stdout line (the CLI's first event; forge's
//!    first canonical event). Medians are printed with forge − raw: the target is < 20 ms.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_adapter_fakemodel::Scenario;

use crate::e2e::{self, PROVIDERS, ServerProcess, Suite, capture, case_run, say};
use crate::workspace_root;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Runs per provider, for each of raw and forge
    #[arg(long, default_value_t = 9)]
    pub runs: usize,
    /// Only the TTFE measurement (skip `cargo bench --workspace`)
    #[arg(long)]
    pub ttfe_only: bool,
    /// Only the peak-memory measurement against the line length
    #[arg(long)]
    pub memory: bool,
    /// Only the server's benchmark: POST→first SSE event vs the raw CLI, 500 subscribers,
    /// 100 concurrent runs
    #[arg(long)]
    pub serve: bool,
    /// Only the warm-validation benchmark (issue 28): a task's baseline in a new work tree
    /// vs the user's warm checkout, for a cargo, a Node and a Python project
    #[arg(long)]
    pub warm: bool,
    /// The cargo repository for `--warm` (a git repository; default: semver's source from
    /// cargo's registry)
    #[arg(long, value_name = "PATH", requires = "warm")]
    pub warm_repo: Option<std::path::PathBuf>,
    /// Only the board's benchmark in Chromium: 1 000 tasks on the board (navigation → every
    /// card) and event → task page latency p50
    #[arg(long)]
    pub board: bool,
    /// Only the task queue's benchmark on PostgreSQL: 200 tasks of 1 s drained by 1 vs 4
    /// workers, queue overhead and wake-up p50
    #[arg(long)]
    pub queue: bool,
    /// With `--queue`: 40 tasks instead of 200 (a quick look)
    #[arg(long, requires = "queue")]
    pub quick: bool,
    /// Only the ACP benchmark: time to first event through forge against a bare ACP client
    /// (initialize, session/new, session/prompt) with the same agent, paired
    #[arg(long)]
    pub acp: bool,
    /// Only the repository map's benchmark: hit@3 and MRR of the map's ranking against
    /// BM25 on real commits of three repositories, and the time to map one cold and warm
    #[arg(long)]
    pub context: bool,
    /// Only the sandbox's benchmark (issue 31): `--sandbox on` paired with `off` — an
    /// agent's start, time to first event per CLI, a guarded task's wall time on semver
    #[arg(long)]
    pub sandbox: bool,
    /// Build without optimisation (a quick look; not the shipped binary's numbers)
    #[arg(long)]
    pub debug: bool,
    /// Only this provider (repeatable)
    #[arg(long, short = 'p', value_name = "P")]
    pub provider: Vec<String>,
}

const SCENARIO: &str = "plain_answer";
const TIMEOUT: Duration = Duration::from_secs(90);

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    if args.warm {
        return crate::bench_warm::run(&root, args.warm_repo.as_deref());
    }
    if args.context {
        return crate::bench_context::run(&root);
    }
    if args.sandbox {
        return crate::bench_sandbox::run(&root, args.runs, &args.provider, !args.debug);
    }
    if args.memory {
        return crate::bench_memory::run(&root);
    }
    if args.queue {
        return crate::bench_queue::run(args.quick);
    }
    if args.board {
        let suite = e2e::setup(&root, false, "bench-board", !args.debug)?;
        return crate::bench_board::run(&suite);
    }
    if args.serve {
        let suite = e2e::setup(&root, true, "bench-serve", !args.debug)?;
        return crate::bench_serve::run(&suite, &root, args.runs);
    }
    if args.acp {
        let suite = e2e::setup(&root, true, "bench-acp", !args.debug)?;
        return crate::bench_acp::run(&suite, args.runs, &args.provider);
    }
    if !args.ttfe_only {
        say("cargo bench --workspace");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["bench", "--workspace"])
            .current_dir(&root)
            .status()
            .context("running cargo bench")?;
        if !status.success() {
            bail!("cargo bench --workspace failed ({status})");
        }
    }
    // The optimised binary: what users run, and what the overhead is about.
    let suite = e2e::setup(&root, true, "bench", true)?;
    let server = ServerProcess::start(&suite.forge, SCENARIO, &suite.work.join("requests.jsonl"))?;
    let prompt = first_prompt(SCENARIO)?;
    let mut rows = vec![measure_fake(
        &suite,
        &root,
        &prompt,
        (args.runs * 3).max(1),
    )?];
    for provider in PROVIDERS {
        if !args.provider.is_empty() && !args.provider.iter().any(|p| p == provider) {
            continue;
        }
        rows.push(measure(
            &suite,
            &server,
            provider,
            &prompt,
            args.runs.max(1),
        )?);
    }
    let mut out = format!(
        "\ntime to first event, {SCENARIO}, median of {} runs each (raw and forge alternating)\n\
         {:<8} {:>10} {:>10} {:>14} {:>20}\n",
        args.runs.max(1),
        "provider",
        "raw ms",
        "forge ms",
        "forge-raw ms",
        "paired median ms"
    );
    for (provider, raw, forge, paired) in rows {
        out.push_str(&format!(
            "{provider:<8} {raw:>10.1} {forge:>10.1} {:>+14.1} {paired:>+20.1}\n",
            forge - raw
        ));
    }
    out.push_str(
        "paired: the median of (forge run i - raw run i), steadier under a busy machine\n\
         fake: fake-agent-cli replaying a claude transcript, an instant CLI: its row is forge's\n\
         own overhead without the real CLIs' start-up noise (3x the runs)\n",
    );
    out.push_str("target: forge adds < 20 ms\n");
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}

/// (provider, raw median ms, forge median ms, median of paired differences ms).
fn measure(
    suite: &Suite,
    server: &ServerProcess,
    provider: &'static str,
    prompt: &str,
    runs: usize,
) -> anyhow::Result<(&'static str, f64, f64, f64)> {
    let expect = e2e::cases::all()
        .into_iter()
        .find(|e| e.scenario == SCENARIO)
        .context("plain_answer expectations")?;
    let mut case = e2e::prepare(suite, &expect, provider, &server.base_url)?;
    let real_binary = forge_cli::offline::PinnedCli::of(provider)
        .context("provider")?
        .binary(&suite.clis);
    // 1. One captured run: the invocation forge makes, and the private home it set up.
    let first = e2e::run_forge(suite, &case, prompt, None, TIMEOUT)?;
    if first.str_at("/status") != Some("success") {
        bail!("{provider}: the capture run failed: {}", first.stderr);
    }
    let captured = capture::read(&case.root).context("no captured invocation")?;
    let home = case_run::run_dirs(&case.workspace)
        .pop()
        .context("no run bundle")?
        .join("home");
    // 2. forge from now on: the real binary and that same home, like the raw replays.
    case.offline.binary = real_binary.clone();
    case.offline.home = Some(home);
    case.offline.isolate_home = false;
    case.offline.copy_user_auth = false;
    std::fs::write(
        case.workspace.join("forge.toml"),
        case.offline.project_toml(),
    )?;

    let (mut raw, mut forge) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        raw.push(raw_ttfe(&real_binary, &captured, &case.workspace, prompt)?);
        forge.push(forge_ttfe(suite, &case, prompt)?);
    }
    say(&format!(
        "{provider}: raw {raw:.1?} ms, forge {forge:.1?} ms"
    ));
    let mut paired: Vec<f64> = forge.iter().zip(&raw).map(|(f, r)| f - r).collect();
    Ok((
        provider,
        median(&mut raw),
        median(&mut forge),
        median(&mut paired),
    ))
}

/// forge's own share of time to first event, measured against a CLI that answers at once:
/// the fake agent CLI replaying the recorded claude transcript, raw vs through
/// `forge-code-agent stream --provider claude --binary <fake>`.
fn measure_fake(
    suite: &Suite,
    root: &Path,
    prompt: &str,
    runs: usize,
) -> anyhow::Result<(&'static str, f64, f64, f64)> {
    let fake = fake_agent_cli(root)?;
    let transcript = root.join("adapters/testkit/fixtures/claude/2.1.330/hello.jsonl");
    let workdir = suite.work.join("ttfe-fake");
    std::fs::create_dir_all(&workdir)?;
    let (mut raw, mut forge) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut command = Command::new(&fake);
        command
            .env("FAKE_REPLAY", &transcript)
            .current_dir(&workdir);
        raw.push(first_line_ms(command, Some(prompt))?);

        let mut command = Command::new(&suite.forge);
        command
            .args(["stream", "--provider", "claude", "--binary"])
            .arg(&fake)
            .arg("--workdir")
            .arg(&workdir)
            .arg("--env")
            .arg(format!("FAKE_REPLAY={}", transcript.display()))
            .args(["--jsonl", "--timeout", "30"])
            .arg(prompt);
        e2e::isolate_env(&mut command, suite);
        forge.push(first_line_ms(command, None)?);
    }
    let mut paired: Vec<f64> = forge.iter().zip(&raw).map(|(f, r)| f - r).collect();
    Ok((
        "fake",
        median(&mut raw),
        median(&mut forge),
        median(&mut paired),
    ))
}

/// The first prompt of a builtin fake-model scenario (what the benches send).
pub(crate) fn first_prompt(scenario: &str) -> anyhow::Result<String> {
    Ok(Scenario::builtin(scenario)?
        .prompts
        .first()
        .cloned()
        .unwrap_or_default())
}

/// The fake agent CLI (an instant CLI replaying a transcript), built optimised.
pub(crate) fn fake_agent_cli(root: &Path) -> anyhow::Result<std::path::PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-p",
            "forge-testkit",
            "--bin",
            "fake-agent-cli",
        ])
        .current_dir(root)
        .status()
        .context("building fake-agent-cli")?;
    if !status.success() {
        bail!("building fake-agent-cli failed ({status})");
    }
    Ok(root.join("target/release/fake-agent-cli"))
}

pub(crate) fn raw_ttfe(
    binary: &Path,
    captured: &capture::Captured,
    workdir: &Path,
    prompt: &str,
) -> anyhow::Result<f64> {
    let mut command = Command::new(binary);
    command
        .args(&captured.args)
        .env_clear()
        .envs(&captured.env)
        .current_dir(workdir);
    first_line_ms(command, Some(prompt))
}

fn forge_ttfe(suite: &Suite, case: &e2e::CaseDir, prompt: &str) -> anyhow::Result<f64> {
    let mut command = Command::new(&suite.forge);
    command
        .arg("stream")
        .args(["--provider", case.offline.provider, "--workdir"])
        .arg(&case.workspace)
        .args(["--jsonl", "--permission-mode", "bypass", "--timeout", "90"])
        .arg(prompt);
    e2e::isolate_env(&mut command, suite);
    command.envs(&case.offline.process_env);
    first_line_ms(command, None)
}

/// Spawn → first stdout line, in ms; then lets the process finish (draining its output).
pub(crate) fn first_line_ms(mut command: Command, stdin: Option<&str>) -> anyhow::Result<f64> {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().context("spawn")?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())?;
        // Dropped here: stdin closes, as forge closes it after writing the prompt.
    }
    let stdout = child.stdout.take().context("stdout pipe")?;
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    let _ = child.wait();
    if line.is_empty() {
        bail!("no output");
    }
    Ok(ms)
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
