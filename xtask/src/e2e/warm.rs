//! `cargo xtask e2e` warm group (issue 28): two `forge-code-agent task run`s with each real
//! CLI on a small cargo repository the user has already built. The agent answers with text
//! only (the baseline is what is measured), so each task ends `no_changes`.
//!
//! | case | shows |
//! |---|---|
//! | `two_tasks` | task 1's baseline steps report the cargo cache `seeded` with files made warm, task 2's `hit`; nothing rebuilt in either (cargo prints no `Compiling` in the logs); the checkout's `git status` is empty and its own build still fresh |
//!
//! The helpers here (a checkout, a timed task) are shared with `cargo xtask bench --warm`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{Suite, isolate_env};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, say};

/// `[workspace]`: the case lives under forge's own workspace, which must not adopt it.
const CARGO_TOML: &str = "[workspace]\n\n[package]\nname = \"warmcase\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB_RS: &str = "pub fn answer() -> u32 {\n    42\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn answers() {\n        assert_eq!(super::answer(), 42);\n    }\n}\n";

/// The environment a toolchain needs although forge runs with an isolated `HOME`: where
/// rustup, cargo and pyenv really live.
pub fn toolchain_env() -> BTreeMap<String, String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut env = BTreeMap::new();
    for (key, default) in [
        ("CARGO_HOME", format!("{home}/.cargo")),
        ("RUSTUP_HOME", format!("{home}/.rustup")),
        ("PYENV_ROOT", format!("{home}/.pyenv")),
        ("npm_config_cache", format!("{home}/.npm")),
    ] {
        env.insert(key.to_owned(), std::env::var(key).unwrap_or(default));
    }
    env
}

/// Runs `script` with `sh -c` in `dir`; its wall time in seconds. Fails with its output
/// when it fails.
pub fn timed(dir: &Path, script: &str, env: &BTreeMap<String, String>) -> anyhow::Result<f64> {
    let started = Instant::now();
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .envs(env)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {script}"))?;
    if !out.status.success() {
        bail!(
            "`{script}` failed in {}: {}{}",
            dir.display(),
            tail(&String::from_utf8_lossy(&out.stdout)),
            tail(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(started.elapsed().as_secs_f64())
}

pub fn tail(text: &str) -> String {
    let start = text.len().saturating_sub(1500);
    let mut start = start;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}

pub fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args(["-c", "user.name=e2e", "-c", "user.email=e2e@forge.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A fake model answering with text only (kept running while this lives), and `provider`
/// pointed at it.
pub struct Offline {
    pub _server: ServerProcess,
    pub toml: String,
    pub env: BTreeMap<String, String>,
}

pub fn offline(suite: &Suite, root: &Path, dir: &Path, provider: &str) -> anyhow::Result<Offline> {
    offline_with(suite, root, dir, provider, "task_text_only")
}

/// [`offline`] with the fake model playing `scenario` (a file of `task_scenarios/`).
pub fn offline_with(
    suite: &Suite,
    root: &Path,
    dir: &Path,
    provider: &str,
    scenario: &str,
) -> anyhow::Result<Offline> {
    let scenario = root.join(format!("xtask/src/e2e/task_scenarios/{scenario}.toml"));
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &dir.join("requests.jsonl"),
    )?;
    let configured = offline::configure(
        provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Template(dir.join("codex-template")),
    )?;
    let mut toml = configured.project_toml();
    toml.push_str(&super::task::pricing(provider));
    toml.push_str("\n[task]\ntimeout_ms = 900000\n\n[validation]\ntimeout_ms = 900000\n");
    Ok(Offline {
        _server: server,
        toml,
        env: configured.process_env,
    })
}

/// One finished `task run`: its report, wall time and baseline.
pub struct TaskRun {
    pub report: Value,
    pub wall_s: f64,
    /// The baseline's steps: (name, seconds, cache note).
    pub baseline: Vec<(String, f64, String)>,
}

impl TaskRun {
    pub fn baseline_s(&self) -> f64 {
        self.baseline.iter().map(|b| b.1).sum()
    }

    pub fn notes(&self) -> String {
        self.baseline
            .iter()
            .map(|(name, _, note)| format!("{name}: {note}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `task run --no-deliver --json` in `repo` with `provider`; the build caches under
/// `cache_home`.
pub fn task_run(
    suite: &Suite,
    repo: &Path,
    provider: &str,
    offline: &Offline,
    cache_home: &Path,
) -> anyhow::Result<TaskRun> {
    task_run_with(suite, repo, provider, offline, cache_home, &[])
}

/// [`task_run`] with more options (`--sandbox off`).
pub fn task_run_with(
    suite: &Suite,
    repo: &Path,
    provider: &str,
    offline: &Offline,
    cache_home: &Path,
    options: &[&str],
) -> anyhow::Result<TaskRun> {
    let mut command = Command::new(&suite.forge);
    command
        .args([
            "task",
            "run",
            "--no-deliver",
            "--provider",
            provider,
            "--json",
        ])
        .args(options)
        .arg("--repo")
        .arg(repo)
        .arg("Say hello; change nothing.");
    isolate_env(&mut command, suite);
    command.envs(&offline.env);
    command.envs(toolchain_env());
    command.env("XDG_CACHE_HOME", cache_home);
    let started = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .output()
        .context("running forge-code-agent task run")?;
    let wall_s = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout).with_context(|| {
        format!(
            "no JSON report (exit {:?}): {}",
            out.status.code(),
            tail(&String::from_utf8_lossy(&out.stderr))
        )
    })?;
    let baseline = report
        .pointer("/baseline/steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| {
            let name = s.get("name").and_then(Value::as_str).unwrap_or("?");
            let ms = s.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
            let cache = s.get("cache");
            let note = cache.map_or_else(
                || "no cache".to_owned(),
                |c| {
                    format!(
                        "{} {} warm_files={}",
                        c.get("entry").and_then(Value::as_str).unwrap_or("?"),
                        c.get("state").and_then(Value::as_str).unwrap_or("?"),
                        c.get("warm_files").and_then(Value::as_u64).unwrap_or(0)
                    )
                },
            );
            #[allow(clippy::cast_precision_loss, reason = "milliseconds of a step")]
            let seconds = ms as f64 / 1000.0;
            (name.to_owned(), seconds, note)
        })
        .collect();
    Ok(TaskRun {
        report,
        wall_s,
        baseline,
    })
}

/// Creates a repository at `repo` from `files`, with `forge.toml` committed too.
pub fn make_repo(repo: &Path, files: &[(&str, &str)]) -> anyhow::Result<()> {
    if repo.exists() {
        std::fs::remove_dir_all(repo)?;
    }
    make_repo_in_place(repo, files)
}

/// Adds `files` to the directory `repo` (creating it), then makes everything in it the
/// first commit of a new repository.
pub fn make_repo_in_place(repo: &Path, files: &[(&str, &str)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(repo)?;
    git(repo, &["init", "-q", "-b", "main"])?;
    for (name, text) in files {
        let path = repo.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "-m", "initial"])?;
    Ok(())
}

/// Whether cargo compiled anything in the logs of the task's validation.
fn compiled_in(repo: &Path, report: &Value) -> Vec<String> {
    let id = report.get("task_id").and_then(Value::as_str).unwrap_or("");
    let dir = repo.join(".forgecode/tasks").join(id).join("validation");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        found.extend(
            text.lines()
                .filter(|l| l.trim_start().starts_with("Compiling"))
                .map(str::to_owned),
        );
    }
    found
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for &provider in &ctx.providers {
        let started = Instant::now();
        let mut verdict = Verdict::new("two_tasks", provider);
        if let Err(e) = two_tasks(ctx, provider, &mut verdict) {
            verdict.failures.push(format!("{e:#}"));
        }
        verdict.seconds = started.elapsed().as_secs_f64();
        say(&format!(
            "warm two_tasks {provider:<7} {} ({:.1}s)",
            if verdict.passed() { "ok" } else { "FAILED" },
            verdict.seconds
        ));
        verdicts.push(verdict);
    }
    Ok(verdicts)
}

fn two_tasks(ctx: &Ctx, provider: &'static str, verdict: &mut Verdict) -> anyhow::Result<()> {
    let dir = ctx.suite.work.join("warm").join(provider);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let offline = offline(&ctx.suite, &ctx.root, &dir, provider)?;
    let repo = dir.join("repo");
    make_repo(
        &repo,
        &[
            ("Cargo.toml", CARGO_TOML),
            ("src/lib.rs", LIB_RS),
            // A library's lockfile is ignored: forge copies the user's in.
            (".gitignore", "/target\n/Cargo.lock\n"),
            ("forge.toml", &offline.toml),
        ],
    )?;
    let env = toolchain_env();
    let checks = "cargo build --all-targets && cargo test";
    timed(&repo, checks, &env)?;
    let cache_home = dir.join("cache");
    let f = &mut verdict.failures;
    let first = task_run(&ctx.suite, &repo, provider, &offline, &cache_home)?;
    let second = task_run(&ctx.suite, &repo, provider, &offline, &cache_home)?;
    verdict.status = first
        .report
        .get("stop_reason")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    for (which, run, state) in [("first", &first, "seeded"), ("second", &second, "hit")] {
        if run.baseline.len() != 2 {
            f.push(format!("{which}: baseline steps {:?}", run.baseline));
        }
        let build = run.report.pointer("/baseline/steps/0/cache");
        if build.and_then(|c| c.get("state")).and_then(Value::as_str) != Some(state) {
            f.push(format!(
                "{which}: build cache is not {state}: {}",
                run.notes()
            ));
        }
        if which == "first"
            && build
                .and_then(|c| c.get("warm_files"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                == 0
        {
            f.push(format!("first: no source file made warm: {}", run.notes()));
        }
        if run.report.pointer("/baseline/passed") != Some(&Value::Bool(true)) {
            f.push(format!("{which}: baseline did not pass"));
        }
        let compiled = compiled_in(&repo, &run.report);
        if !compiled.is_empty() {
            f.push(format!("{which}: cargo rebuilt {compiled:?}"));
        }
    }
    let status = git(&repo, &["status", "--porcelain"])?;
    if !status.trim().is_empty() {
        f.push(format!("checkout's git status not clean: {status}"));
    }
    if std::fs::read_to_string(repo.join(".gitignore"))?.contains(".forgecode") {
        f.push("forge wrote to the user's .gitignore".into());
    }
    let after = Command::new("cargo")
        .args(["build", "--all-targets", "-v"])
        .current_dir(&repo)
        .envs(&env)
        .output()?;
    let after_text = String::from_utf8_lossy(&after.stderr);
    if after_text
        .lines()
        .any(|l| l.trim_start().starts_with("Compiling"))
    {
        f.push(format!(
            "the checkout's build is no longer fresh: {}",
            tail(&after_text)
        ));
    }
    verdict.note = format!(
        "baseline 1: {:.2}s ({}), 2: {:.2}s ({})",
        first.baseline_s(),
        first.notes(),
        second.baseline_s(),
        second.notes()
    );
    Ok(())
}
