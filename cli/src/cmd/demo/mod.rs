//! `demo`: the first command on a fresh machine. Installs the pinned CLIs (once, into the
//! user cache), starts the embedded fake model, and runs forge's main job — a task through
//! the guarded pipeline (agent, validation, a correction cycle resuming the same session,
//! review, risk, commit) — with each provider's real CLI on a scratch repository: no
//! account, no key, no internet besides the npm registry. `--run` keeps the single-prompt
//! demo (one prompt, streamed events). With gemini among the providers, the task demo ends
//! with one prompt through `gemini --acp` configured as an Agent Client Protocol provider
//! (`kind = "acp"`).

mod acp;
mod single;
mod summary;
mod task;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;

use crate::exit::Failure;
use crate::npm_install;
use crate::offline::{self, PINNED_CLIS};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run only this provider: claude, codex or gemini [default: all three]
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: Option<String>,
    /// Run one prompt and stream its events instead of a task (the single-prompt demo)
    #[arg(long)]
    pub run: bool,
    /// The fake model's script: a scenario file or a built-in name (`fake-model list`)
    /// [default: task_fix_cycle; write_file with --run]
    #[arg(long, value_name = "FILE|NAME")]
    pub scenario: Option<String>,
    /// Stop a provider's agent run after this many seconds
    #[arg(long = "timeout", value_name = "SECONDS", default_value_t = 120)]
    pub timeout_secs: u64,
    /// Keep the scratch repositories (task branches and commits) instead of removing them
    #[arg(long)]
    pub keep: bool,
}

/// What both demos start from: the providers, the installed CLIs, a fresh directory.
pub struct Setup {
    pub providers: Vec<&'static str>,
    pub clis_dir: PathBuf,
    /// `<user cache>/demo/<millis>`.
    pub root: PathBuf,
}

pub async fn run(args: DemoArgs) -> Result<u8, Failure> {
    let providers: Vec<&'static str> = match &args.provider {
        None => PINNED_CLIS.iter().map(|c| c.provider).collect(),
        Some(name) => vec![
            offline::PinnedCli::of(name)
                .ok_or_else(|| {
                    Failure::Usage(format!(
                        "unknown provider {name:?}: choose claude, codex or gemini"
                    ))
                })?
                .provider,
        ],
    };
    let env: BTreeMap<String, String> = std::env::vars().collect();

    check_node().await?;
    if !args.run {
        check_git().await?;
    }
    let clis_dir = offline::user_clis_dir(&env).ok_or_else(|| {
        Failure::Usage("no cache directory: set HOME, XDG_CACHE_HOME or FORGE_CLIS_DIR".into())
    })?;
    install_if_missing(&clis_dir).await?;

    let root = demo_root(&env)?;
    std::fs::create_dir_all(&root)?;
    let setup = Setup {
        providers,
        clis_dir,
        root,
    };
    let timeout = Duration::from_secs(args.timeout_secs);
    if args.run {
        let scenario = args.scenario.as_deref().unwrap_or("write_file");
        return single::run(&setup, scenario, timeout).await;
    }
    let scenario = args.scenario.as_deref().unwrap_or(task::SCENARIO);
    let mut code = task::run(&setup, scenario, timeout).await;
    if setup.providers.contains(&acp::CLI) && matches!(code, Ok(crate::exit::SUCCESS)) {
        match acp::run(&setup, timeout).await {
            Ok(true) => {}
            Ok(false) => code = Ok(crate::exit::RUN_ERROR),
            Err(e) => code = Err(e),
        }
    }
    if args.keep {
        note(&format!(
            "kept the scratch repositories under {}",
            setup.root.display()
        ));
    } else {
        let _ = std::fs::remove_dir_all(&setup.root);
        note("removed the scratch repositories (--keep keeps them, branches and commits)");
    }
    code
}

/// `git` must answer `--version`: the task runs in a git work tree and ends in a commit.
async fn check_git() -> Result<(), Failure> {
    if answers_version("git").await {
        return Ok(());
    }
    Err(Failure::Usage(
        "the demo needs git, and `git` was not found on PATH: install git and run \
         `forge-code-agent demo` again"
            .into(),
    ))
}

async fn answers_version(tool: &str) -> bool {
    tokio::process::Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// `node` and `npm` must answer `--version`: gemini runs on Node.js, npm installs the CLIs.
async fn check_node() -> Result<(), Failure> {
    for tool in ["node", "npm"] {
        if !answers_version(tool).await {
            return Err(Failure::Usage(format!(
                "the demo needs Node.js and npm, and `{tool}` was not found on PATH: install \
                 Node.js (https://nodejs.org, it ships npm) and run `forge-code-agent demo` again"
            )));
        }
    }
    Ok(())
}

/// Installs the pinned CLIs into `clis_dir` unless all are there: one line says what and how
/// long it took; npm's own output is shown only when the install fails.
async fn install_if_missing(clis_dir: &Path) -> Result<(), Failure> {
    let Some(plan) = npm_install::plan(clis_dir, offline::missing_clis) else {
        return Ok(());
    };
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "demo: {}", plan.line());
    let _ = stderr.flush();
    let dir = clis_dir.to_path_buf();
    let installed = tokio::task::spawn_blocking(move || {
        npm_install::install(OsStr::new("npm"), &dir, offline::missing_clis)
    })
    .await
    .map_err(|e| Failure::Other(anyhow::anyhow!("the npm install task failed: {e}")))?;
    match installed {
        Ok(done) => {
            let _ = writeln!(stderr, "{}", done.line());
            Ok(())
        }
        Err(failed) => {
            let _ = writeln!(stderr, "failed");
            Err(Failure::Other(anyhow::anyhow!(failed)))
        }
    }
}

/// `<user cache>/demo/<seconds since epoch>`: a fresh set of workspaces per demo run, never
/// under /tmp (codex refuses to set up its helpers there).
fn demo_root(env: &BTreeMap<String, String>) -> Result<PathBuf, Failure> {
    let cache = offline::user_cache_dir(env)
        .ok_or_else(|| Failure::Usage("no cache directory: set HOME or XDG_CACHE_HOME".into()))?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    Ok(cache.join("demo").join(stamp.to_string()))
}

/// Runs `request`, printing a `title` line and then each event as `run` does (Ctrl-C
/// cancels it); its result and how long it took.
async fn show(
    agent: &forge_app::CodeAgent,
    request: forge_domain::ExecutionRequest,
    title: &str,
) -> Result<(forge_domain::ExecutionResult, f64), Failure> {
    use std::io::IsTerminal;

    use crate::output::{human::HumanRenderer, spinner::Spinner, style::Style};

    let stdout = std::io::stdout();
    let is_tty = stdout.is_terminal();
    let style = Style::detect(is_tty);
    let mut out = stdout.lock();
    writeln!(out, "\n{}", style.bold(title))?;
    let started = std::time::Instant::now();
    let mut handle = agent.stream(request);
    let watcher = crate::signals::watch(handle.canceller(), false)?;
    let spinner = Spinner::new(is_tty && std::io::stderr().is_terminal());
    let mut renderer = HumanRenderer::new(&mut out, style, spinner, true);
    while let Some(event) = handle.next_event().await {
        renderer.event(&event);
    }
    let result = handle.result().await;
    renderer.finish(&result);
    watcher.abort();
    Ok((result, started.elapsed().as_secs_f64()))
}

fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "demo: {text}");
}
