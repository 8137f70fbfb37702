//! `demo`: the first command on a fresh machine. Installs the pinned CLIs (once, into the
//! user cache), starts the embedded fake model, and runs one real task through each
//! provider's real CLI, streaming the canonical events — no account, no key, no internet
//! besides the npm registry.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer};
use forge_domain::{ExecutionResult, ExecutionStatus, PermissionMode};

use crate::cmd::fake_model::load_scenario;
use crate::compose;
use crate::exit::{Failure, SUCCESS};
use crate::offline::{self, CodexHome, PINNED_CLIS};
use crate::output::human::HumanRenderer;
use crate::output::spinner::Spinner;
use crate::output::style::Style;
use crate::signals;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run only this provider: claude, codex or gemini [default: all three]
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: Option<String>,
    /// The fake model's script: a scenario file or a built-in name (`fake-model list`)
    #[arg(long, value_name = "FILE|NAME", default_value = "write_file")]
    pub scenario: String,
    /// Stop a provider's run after this many seconds
    #[arg(long = "timeout", value_name = "SECONDS", default_value_t = 120)]
    pub timeout_secs: u64,
}

/// One provider's line in the closing summary.
struct Outcome {
    provider: &'static str,
    status: String,
    files: Vec<String>,
    seconds: f64,
    ok: bool,
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
    let scenario = load_scenario(&args.scenario)?;
    let prompt = scenario
        .prompts
        .first()
        .cloned()
        .unwrap_or_else(|| "Create a file hello.txt containing 'hi'.".to_owned());
    let env: BTreeMap<String, String> = std::env::vars().collect();

    check_node().await?;
    let clis_dir = offline::user_clis_dir(&env).ok_or_else(|| {
        Failure::Usage("no cache directory: set HOME, XDG_CACHE_HOME or FORGE_CLIS_DIR".into())
    })?;
    install_if_missing(&clis_dir).await?;

    let root = demo_root(&env)?;
    std::fs::create_dir_all(&root)?;
    let server = FakeModelServer::start(
        scenario,
        FakeModelOptions {
            port: None,
            request_log_path: Some(root.join("requests.jsonl")),
        },
    )
    .await
    .map_err(|e| Failure::Other(e.into()))?;
    note(&format!(
        "fake model on {} (scenario {}); workspaces under {}",
        server.base_url(),
        args.scenario,
        root.display()
    ));

    let mut outcomes = Vec::new();
    for provider in providers {
        let outcome = run_one(
            provider,
            &clis_dir,
            &server.base_url(),
            &root,
            &prompt,
            Duration::from_secs(args.timeout_secs),
        )
        .await?;
        outcomes.push(outcome);
    }
    let _ = server.shutdown().await;
    print_summary(&outcomes)?;
    Ok(if outcomes.iter().all(|o| o.ok) {
        SUCCESS
    } else {
        crate::exit::RUN_ERROR
    })
}

async fn run_one(
    provider: &'static str,
    clis_dir: &Path,
    base_url: &str,
    root: &Path,
    prompt: &str,
    timeout: Duration,
) -> Result<Outcome, Failure> {
    let workspace = root.join(provider);
    std::fs::create_dir_all(&workspace)?;
    // This process cannot point its own CODEX_HOME at a template, so codex gets one
    // pre-created home, private to this demo run.
    let codex_home = CodexHome::Fixed(root.join("codex-home"));
    let offline = offline::configure(provider, clis_dir, base_url, &codex_home)?;
    let agent = compose::agent_builder()
        .provider(provider)
        .provider_settings(provider, offline.settings())
        .workdir(&workspace)
        .timeout(timeout)
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut request = agent.request(prompt);
    // The fake model asks for tools; headless CLIs only run them without asking in bypass.
    request.permission_mode = Some(PermissionMode::Bypass);

    let stdout = std::io::stdout();
    let is_tty = stdout.is_terminal();
    let style = Style::detect(is_tty);
    let mut out = stdout.lock();
    writeln!(
        out,
        "\n{}",
        style.bold(format!("── {provider} ──  {prompt}"))
    )?;
    let started = Instant::now();
    let mut handle = agent.stream(request);
    let watcher = signals::watch(handle.canceller(), false)?;
    let spinner = Spinner::new(is_tty && std::io::stderr().is_terminal());
    let mut renderer = HumanRenderer::new(&mut out, style, spinner, true);
    while let Some(event) = handle.next_event().await {
        renderer.event(&event);
    }
    let result = handle.result().await;
    renderer.finish(&result);
    watcher.abort();
    Ok(Outcome {
        provider,
        status: status_text(&result),
        files: written_files(&workspace),
        seconds: started.elapsed().as_secs_f64(),
        ok: result.status == ExecutionStatus::Success,
    })
}

fn status_text(result: &ExecutionResult) -> String {
    if result.timed_out() {
        "timed out".to_owned()
    } else if result.was_cancelled() {
        "cancelled".to_owned()
    } else {
        match result.status {
            ExecutionStatus::Success => "success",
            ExecutionStatus::Partial => "partial",
            ExecutionStatus::Error => "error",
        }
        .to_owned()
    }
}

/// Files the agent left in its workspace (forge's own `.forgecode/` aside).
fn written_files(workspace: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(workspace)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name != ".forgecode")
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn print_summary(outcomes: &[Outcome]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\n{:<8}  {:<10}  {:<24}  seconds",
        "provider", "status", "files written"
    )?;
    for o in outcomes {
        let files = if o.files.is_empty() {
            "-".to_owned()
        } else {
            o.files.join(", ")
        };
        writeln!(
            out,
            "{:<8}  {:<10}  {:<24}  {:.1}",
            o.provider, o.status, files, o.seconds
        )?;
    }
    out.flush()
}

/// `node` and `npm` must answer `--version`: gemini runs on Node.js, npm installs the CLIs.
async fn check_node() -> Result<(), Failure> {
    for tool in ["node", "npm"] {
        let found = tokio::process::Command::new(tool)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        if !found {
            return Err(Failure::Usage(format!(
                "the demo needs Node.js and npm, and `{tool}` was not found on PATH: install \
                 Node.js (https://nodejs.org, it ships npm) and run `forge-code-agent demo` again"
            )));
        }
    }
    Ok(())
}

/// Installs the pinned CLIs into `clis_dir` unless all are there; npm's output goes to stderr.
async fn install_if_missing(clis_dir: &Path) -> Result<(), Failure> {
    let missing = offline::missing_clis(clis_dir);
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing.iter().map(offline::PinnedCli::spec).collect();
    note(&format!(
        "installing {} into {} (once; about a minute)…",
        names.join(" "),
        clis_dir.display()
    ));
    std::fs::create_dir_all(clis_dir)?;
    let stderr = std::io::stderr().as_fd().try_clone_to_owned()?;
    let status = tokio::process::Command::new("npm")
        .args(offline::npm_install_args(clis_dir))
        .stdin(Stdio::null())
        .stdout(Stdio::from(stderr))
        .status()
        .await?;
    let still_missing = offline::missing_clis(clis_dir);
    if !status.success() || !still_missing.is_empty() {
        return Err(Failure::Other(anyhow::anyhow!(
            "npm install into {} failed ({status}); missing: {}",
            clis_dir.display(),
            still_missing
                .iter()
                .map(offline::PinnedCli::spec)
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    note("installed.");
    Ok(())
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

fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "demo: {text}");
}
