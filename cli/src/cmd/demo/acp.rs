//! The demo's last act: an Agent Client Protocol agent as a provider. The pinned gemini CLI
//! in its ACP mode (`gemini --acp`, so nothing more to install) is configured as a user
//! would configure any ACP agent — a `kind = "acp"` section in the workspace's `forge.toml`,
//! no code — and one prompt goes through it against the embedded fake model, its events
//! streamed like the other providers'.

use std::io::Write;
use std::time::Duration;

use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer};
use forge_app::CodeAgent;
use forge_app::config::{PROJECT_FILE, defaults, merge, parse_file};
use forge_app::from_config::apply_request_defaults;
use forge_domain::{ExecutionStatus, PermissionMode};

use super::{Setup, note};
use crate::cmd::fake_model::load_scenario;
use crate::compose;
use crate::exit::Failure;
use crate::offline;

/// The CLI whose ACP mode the demo shows (its provider is `gemini-acp`).
pub const CLI: &str = "gemini";

/// The fake model's script: write a file, then say so.
const SCENARIO: &str = "write_file";

/// Runs the prompt through `gemini --acp`; `true` when it succeeded and wrote its file.
pub async fn run(setup: &Setup, timeout: Duration) -> Result<bool, Failure> {
    let scenario = load_scenario(SCENARIO)?;
    let prompt = scenario
        .prompts
        .first()
        .cloned()
        .unwrap_or_else(|| "Create a file hello.txt containing 'hi'.".to_owned());
    let server = FakeModelServer::start(scenario, FakeModelOptions::default())
        .await
        .map_err(|e| Failure::Other(e.into()))?;
    let dir = setup.root.join("acp");
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace)?;
    let workspace = std::fs::canonicalize(&workspace)?;
    let configured = offline::configure_acp(CLI, &setup.clis_dir, &server.base_url(), &dir)?;
    let forge_toml = workspace.join(PROJECT_FILE);
    std::fs::write(&forge_toml, &configured.project_toml)?;
    // Only this workspace's forge.toml: the user's own configuration is not the demo's.
    let layer = parse_file(&configured.project_toml, &forge_toml)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let config = merge(&[defaults(), layer]);
    let agent = CodeAgent::builder_from_config(&config, compose::registry(), compose::runtime())
        .and_then(|b| b.redactor(compose::environment_redactor()).build())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut request = agent.request(prompt.as_str());
    request.workdir = workspace.clone();
    apply_request_defaults(&config, &mut request);
    request.permission_mode = Some(PermissionMode::Bypass);
    request.timeout_ms = Some(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));

    note(&format!(
        "fake model on {}; workspace {}",
        server.base_url(),
        workspace.display()
    ));
    let title = format!(
        "── {} (Agent Client Protocol: `{CLI} --acp`, kind = \"acp\" in forge.toml) ──  {prompt}",
        configured.provider
    );
    let (result, seconds) = super::show(&agent, request, &title).await?;
    let _ = server.shutdown().await;
    let wrote = std::fs::read_to_string(workspace.join("hello.txt")).is_ok_and(|t| t == "hi\n");
    let ok = result.status == ExecutionStatus::Success && wrote;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\n{} through ACP: {}, {} ({:.1} s)",
        configured.provider,
        if ok { "success" } else { "FAILED" },
        if wrote {
            "wrote hello.txt"
        } else {
            "hello.txt not written"
        },
        seconds
    )?;
    out.flush()?;
    Ok(ok)
}
