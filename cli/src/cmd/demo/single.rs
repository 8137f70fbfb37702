//! `demo --run`: the single-prompt demo. The scenario's first prompt goes through each
//! provider's real CLI against the embedded fake model, streaming the canonical events.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer};
use forge_domain::{ExecutionResult, ExecutionStatus, PermissionMode};

use super::{Setup, note};
use crate::cmd::fake_model::load_scenario;
use crate::compose;
use crate::exit::{Failure, SUCCESS};
use crate::offline::{self, CodexHome};

/// One provider's line in the closing summary.
struct Outcome {
    provider: &'static str,
    status: String,
    files: Vec<String>,
    seconds: f64,
    ok: bool,
}

/// Runs the scenario's first prompt through each provider, one after the other.
pub async fn run(setup: &Setup, scenario_name: &str, timeout: Duration) -> Result<u8, Failure> {
    let scenario = load_scenario(scenario_name)?;
    let prompt = scenario
        .prompts
        .first()
        .cloned()
        .unwrap_or_else(|| "Create a file hello.txt containing 'hi'.".to_owned());
    let root = &setup.root;
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
        "fake model on {} (scenario {scenario_name}); workspaces under {}",
        server.base_url(),
        root.display()
    ));

    let mut outcomes = Vec::new();
    for &provider in &setup.providers {
        let outcome = run_one(
            provider,
            &setup.clis_dir,
            &server.base_url(),
            root,
            &prompt,
            timeout,
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

    let (result, seconds) =
        super::show(&agent, request, &format!("── {provider} ──  {prompt}")).await?;
    Ok(Outcome {
        provider,
        status: status_text(&result),
        files: written_files(&workspace),
        seconds,
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
