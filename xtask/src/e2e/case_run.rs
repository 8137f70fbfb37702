//! One case (scenario × provider): a workspace with a `forge.toml` pointing the provider at
//! the scenario's fake model, then the `forge-code-agent run --json` binary, once (twice for
//! a resume).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use forge_cli::offline::{self, CodexHome, OfflineProvider};
use serde_json::Value;

use super::capture;
use super::cases::Expect;

/// Extra time past forge's own `--timeout` before the harness kills forge itself.
const WATCHDOG_SLACK: Duration = Duration::from_secs(30);

/// What every case shares.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The `forge-code-agent` binary under test.
    pub forge: PathBuf,
    pub clis: PathBuf,
    /// `target/e2e/work`: one directory per case below it.
    pub work: PathBuf,
    /// An empty user config, so the developer's own `~/.config/forge-code-agent` is not read.
    pub empty_config: PathBuf,
    /// An empty `HOME` for forge and what it starts: the CLIs' shell commands run login
    /// shells, and the developer's dotfiles (pyenv's rehash lock, prompts, slow profiles)
    /// must not change a result.
    pub home: PathBuf,
    /// Wrap each CLI to capture its argv and environment (for `--record`).
    pub capture: bool,
}

/// One run of the binary.
#[derive(Debug)]
pub struct Run {
    pub exit: Option<i32>,
    /// The printed `ExecutionResult`, when it was JSON.
    pub result: Option<Value>,
    pub stderr: String,
    pub seconds: f64,
}

impl Run {
    pub fn str_at(&self, pointer: &str) -> Option<&str> {
        self.result.as_ref()?.pointer(pointer)?.as_str()
    }
}

/// A prepared case directory: `<work>/<scenario>/<provider>/{ws, codex-template, …}`.
#[derive(Debug)]
pub struct CaseDir {
    pub root: PathBuf,
    pub workspace: PathBuf,
    pub offline: OfflineProvider,
}

/// Creates the case's directories and its workspace's `forge.toml`.
pub fn prepare(
    suite: &Suite,
    expect: &Expect,
    provider: &str,
    base_url: &str,
) -> anyhow::Result<CaseDir> {
    let root = suite.work.join(expect.scenario).join(provider);
    if root.exists() {
        std::fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
    }
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace)?;
    // A repository of its own: otherwise the CLIs see this project's repository around the
    // workspace (claude diffs changed files against it, codex trusts it).
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&workspace)
        .status()
        .context("git init (is git installed?)")?;
    anyhow::ensure!(
        status.success(),
        "git init in {} failed",
        workspace.display()
    );
    let template = CodexHome::Template(root.join("codex-template"));
    let mut offline = offline::configure(provider, &suite.clis, base_url, &template)?;
    if suite.capture {
        offline.binary = capture::wrap(&offline.binary, &root)?;
    }
    std::fs::write(workspace.join("forge.toml"), offline.project_toml())?;
    Ok(CaseDir {
        root,
        workspace,
        offline,
    })
}

/// `forge-code-agent run --provider P --workdir W --json --timeout T --permission-mode
/// bypass [--resume S] PROMPT`, with the process environment the configuration needs.
pub fn run_forge(
    suite: &Suite,
    case: &CaseDir,
    prompt: &str,
    resume: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<Run> {
    run_command(forge_command(suite, case, prompt, resume, timeout), timeout)
}

/// The command [`run_forge`] runs.
pub fn forge_command(
    suite: &Suite,
    case: &CaseDir,
    prompt: &str,
    resume: Option<&str>,
    timeout: Duration,
) -> Command {
    let mut command = Command::new(&suite.forge);
    command
        .arg("run")
        .args(["--provider", case.offline.provider])
        .arg("--workdir")
        .arg(&case.workspace)
        .args(["--json", "--permission-mode", "bypass"])
        .args(["--timeout", &timeout.as_secs().to_string()]);
    if let Some(session) = resume {
        command.arg(format!("--resume={session}"));
    }
    command.arg(prompt);
    isolate_env(&mut command, suite);
    command.envs(&case.offline.process_env);
    command
}

/// Runs a forge command built like [`forge_command`] (forge's `--timeout` is `timeout`).
pub fn run_command(command: Command, timeout: Duration) -> anyhow::Result<Run> {
    let started = Instant::now();
    let output = run_with_watchdog(command, timeout + WATCHDOG_SLACK)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Ok(Run {
        exit: output.status.code(),
        result: serde_json::from_str(&stdout).ok(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// No `FORGE_*` or `CLAUDE_CLI_*` of the developer's shell, and an empty user config: the
/// workspace's `forge.toml` alone configures the run.
pub fn isolate_env(command: &mut Command, suite: &Suite) {
    for (key, _) in std::env::vars_os() {
        let name = key.to_string_lossy();
        if name.starts_with("FORGE_") || name.starts_with("CLAUDE_CLI_") {
            command.env_remove(&key);
        }
    }
    command.env("FORGE_CONFIG", &suite.empty_config);
    command.env("HOME", &suite.home);
}

/// Runs `command` to the end, killing it after `limit` (forge should never need that).
pub fn run_with_watchdog(
    mut command: Command,
    limit: Duration,
) -> anyhow::Result<std::process::Output> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().context("spawning forge-code-agent")?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => Ok(output?),
        Err(_) => {
            // Our own child: kill it by its pid, then collect what it printed.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            let output = rx.recv().context("forge-code-agent vanished")??;
            Ok(output)
        }
    }
}

/// The workspace's run bundle directories, oldest first (run ids are UUIDv7: time-sorted).
pub fn run_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace.join(".forgecode/runs"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}
