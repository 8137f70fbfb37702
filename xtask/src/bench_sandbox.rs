//! `cargo xtask bench --sandbox` (issue 31): what confinement costs, `--sandbox on` paired
//! with `--sandbox off` in the same run, alternating so a busy machine slows both alike.
//!
//! 1. **start**: `forge-code-agent run` with the fake agent CLI (an instant CLI replaying a
//!    recorded claude transcript) — spawn → exit, so the difference is what the sandbox adds
//!    to starting an agent (facts, bubblewrap, namespaces, mounts). Target ≤ 15 ms p50.
//! 2. **TTFE**: `stream --jsonl` with each real CLI against the fake model, spawn → first
//!    event. Target ≤ 10 ms p50 added.
//! 3. **task**: a guarded `task run` on the semver repository (claude against the fake model,
//!    which edits `src/lib.rs`; the baseline's and the validation's `cargo build` and `cargo
//!    test` confined too, the build cache warm), whole wall time. Target ≤ 2 % added.
//!
//! `FORGE_BENCH_BINARY=PATH` measures another build of `forge-code-agent` (an earlier one,
//! for a before/after comparison); `--debug` builds this one without optimisation.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::bench::{first_line_ms, first_prompt, median};
use crate::e2e::warm::{self, TaskRun};
use crate::e2e::{self, PROVIDERS, ServerProcess, Suite, say};

const SCENARIO: &str = "plain_answer";
const MODES: [&str; 2] = ["on", "off"];
/// Measured rounds of the guarded task (a warm one is ~1 s: a few are cheap and steady the ratio).
const TASK_ROUNDS: usize = 6;

/// One measure: p50 with the sandbox on and off, and the median of the paired differences.
struct Row {
    what: String,
    on: f64,
    off: f64,
    paired: f64,
}

impl Row {
    fn of(what: impl Into<String>, on: &mut [f64], off: &mut [f64]) -> Self {
        let mut paired: Vec<f64> = on.iter().zip(off.iter()).map(|(a, b)| a - b).collect();
        Self {
            what: what.into(),
            on: median(on),
            off: median(off),
            paired: median(&mut paired),
        }
    }
}

pub fn run(root: &Path, runs: usize, providers: &[String], release: bool) -> anyhow::Result<()> {
    let mut suite = e2e::setup(root, true, "bench-sandbox", release)?;
    // Another build of `forge-code-agent` (an earlier one, for a before/after comparison).
    if let Some(binary) = std::env::var_os("FORGE_BENCH_BINARY") {
        suite.forge = binary.into();
    }
    let runs = runs.max(1);
    let start = start_row(&suite, root, runs * 3)?;
    let server = ServerProcess::start(&suite.forge, SCENARIO, &suite.work.join("requests.jsonl"))?;
    let prompt = first_prompt(SCENARIO)?;
    let mut ttfe = Vec::new();
    for provider in PROVIDERS {
        if !providers.is_empty() && !providers.iter().any(|p| p == provider) {
            continue;
        }
        ttfe.push(ttfe_row(&suite, &server, provider, &prompt, runs)?);
    }
    let task = task_row(&suite, root)?;

    let mut out = format!(
        "\nsandbox cost: --sandbox on vs off, alternating (ms; p50 of {} start runs, {runs} TTFE runs)\n\
         {:<18} {:>10} {:>10} {:>12} {:>10}  target\n",
        runs * 3,
        "measure",
        "on",
        "off",
        "on-off p50",
        "paired"
    );
    let line = |r: &Row, target: &str| {
        format!(
            "{:<18} {:>10.1} {:>10.1} {:>+12.1} {:>+10.1}  {target}\n",
            r.what,
            r.on,
            r.off,
            r.on - r.off,
            r.paired
        )
    };
    out.push_str(&line(
        &start,
        &verdict(start.paired <= 15.0, "≤ 15 ms added"),
    ));
    for row in &ttfe {
        out.push_str(&line(row, &verdict(row.paired <= 10.0, "≤ 10 ms added")));
    }
    let ratio = task.on / task.off;
    out.push_str(&line(
        &task,
        &verdict(ratio <= 1.02, &format!("≤ 2 % added (on/off = {ratio:.3})")),
    ));
    out.push_str(
        "start: `run` with an instant fake CLI, spawn → exit; ttfe: `stream --jsonl`, spawn → \
         first event; task: a guarded `task run` on semver (an edit of src/lib.rs built and \
         tested, confined), wall\n\
         paired: the median of (on run i − off run i)\n",
    );
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}

fn verdict(ok: bool, target: &str) -> String {
    format!("{target}: {}", if ok { "met" } else { "MISSED" })
}

/// `run` with the fake agent CLI, spawn → exit.
fn start_row(suite: &Suite, root: &Path, runs: usize) -> anyhow::Result<Row> {
    let fake = crate::bench::fake_agent_cli(root)?;
    let transcript = root.join("adapters/testkit/fixtures/claude/2.1.330/hello.jsonl");
    let workdir = suite.work.join("sandbox-start");
    std::fs::create_dir_all(&workdir)?;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for mode in MODES {
            let mut command = Command::new(&suite.forge);
            command
                .args(["run", "--provider", "claude", "--sandbox", mode, "--binary"])
                .arg(&fake)
                .arg("--workdir")
                .arg(&workdir)
                .arg("--env")
                .arg(format!("FAKE_REPLAY={}", transcript.display()))
                .args(["--json", "--timeout", "30", "hello"]);
            e2e::isolate_env(&mut command, suite);
            let ms = wall_ms(command)?;
            if mode == "on" { &mut on } else { &mut off }.push(ms);
        }
    }
    say(&format!("start: on {on:.1?} ms, off {off:.1?} ms"));
    Ok(Row::of("start (fake CLI)", &mut on, &mut off))
}

/// `stream --jsonl` with a real CLI, spawn → first event.
fn ttfe_row(
    suite: &Suite,
    server: &ServerProcess,
    provider: &'static str,
    prompt: &str,
    runs: usize,
) -> anyhow::Result<Row> {
    let expect = e2e::cases::all()
        .into_iter()
        .find(|e| e.scenario == SCENARIO)
        .context("plain_answer expectations")?;
    let case = e2e::prepare(suite, &expect, provider, &server.base_url)?;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    // One run each first: the CLI's first start (its caches, its home) is not measured.
    for round in 0..=runs {
        for mode in MODES {
            let mut command = Command::new(&suite.forge);
            command
                .arg("stream")
                .args(["--provider", case.offline.provider, "--sandbox", mode])
                .arg("--workdir")
                .arg(&case.workspace)
                .args(["--jsonl", "--permission-mode", "bypass", "--timeout", "90"])
                .arg(prompt);
            e2e::isolate_env(&mut command, suite);
            command.envs(&case.offline.process_env);
            let ms = first_line_ms(command, None)?;
            if round > 0 {
                if mode == "on" { &mut on } else { &mut off }.push(ms);
            }
        }
    }
    say(&format!(
        "{provider} ttfe: on {on:.1?} ms, off {off:.1?} ms"
    ));
    Ok(Row::of(format!("ttfe {provider}"), &mut on, &mut off))
}

/// A guarded `task run` on semver, on and off alternating after one warm-up of each.
fn task_row(suite: &Suite, root: &Path) -> anyhow::Result<Row> {
    let work = std::env::temp_dir().join("forge-bench-sandbox");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let checkout = work.join("semver");
    crate::bench_warm::semver_checkout(&checkout)?;
    let dir = work.join("semver-forge");
    std::fs::create_dir_all(&dir)?;
    // A guarded task is a change validated: the agent edits src/lib.rs, so the validation
    // builds and tests semver again (a task that changes nothing validates nothing).
    let offline = warm::offline_with(suite, root, &dir, "claude", "task_semver_edit")?;
    std::fs::write(checkout.join("forge.toml"), &offline.toml)?;
    warm::git(&checkout, &["add", "-A"])?;
    warm::git(&checkout, &["commit", "-q", "-m", "bench checkout"])?;
    let cache = dir.join("cache");
    let (mut on, mut off) = (Vec::new(), Vec::new());
    // Round 0 warms the build cache and the CLI; the rest are measured.
    for round in 0..=TASK_ROUNDS {
        for mode in MODES {
            say(&format!("task on semver, sandbox {mode}, round {round}"));
            let run = warm::task_run_with(
                suite,
                &checkout,
                "claude",
                &offline,
                &cache,
                &["--sandbox", mode],
            )?;
            check_task(&run, mode)?;
            if round > 0 {
                let ms = run.wall_s * 1000.0;
                if mode == "on" { &mut on } else { &mut off }.push(ms);
            }
        }
    }
    say(&format!("task: on {on:.0?} ms, off {off:.0?} ms"));
    Ok(Row::of("task on semver", &mut on, &mut off))
}

fn check_task(run: &TaskRun, mode: &str) -> anyhow::Result<()> {
    let sandbox = run
        .report
        .pointer("/sandbox")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if run.baseline.is_empty() {
        bail!(
            "sandbox {mode}: the task ran no baseline: {}",
            warm::tail(&run.report.to_string())
        );
    }
    if !sandbox.starts_with(mode) {
        bail!("sandbox {mode}: the report says sandbox {sandbox:?}");
    }
    // The change was validated: built and tested, and passed.
    if run.report.pointer("/cycles/0/validation/passed") != Some(&serde_json::Value::Bool(true)) {
        bail!(
            "sandbox {mode}: the change was not validated: {}",
            warm::tail(&run.report.to_string())
        );
    }
    Ok(())
}

/// Spawn → exit of `command`, in ms; a failure is an error (a bench of failures means nothing).
fn wall_ms(mut command: Command) -> anyhow::Result<f64> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let out = command.output().context("spawn")?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        bail!(
            "exit {:?}: {}",
            out.status.code(),
            warm::tail(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(ms)
}
