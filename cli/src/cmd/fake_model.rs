//! `fake-model serve | list`: the scripted model server, for testing pipelines offline.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer, Scenario};
use tokio::signal::unix::{SignalKind, signal};

use crate::exit::Failure;

#[derive(Debug, Subcommand)]
pub enum FakeModelCommand {
    /// Serve a scenario on the loopback interface until Ctrl-C; the first stdout line is
    /// `listening on <URL>`, then the environment each CLI needs
    Serve(ServeArgs),
    /// List the built-in scenarios
    List,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A scenario file (.toml or .json) or the name of a built-in scenario (see `list`)
    #[arg(long, value_name = "FILE|NAME")]
    pub scenario: String,
    /// Port on the loopback interface [default: a free one]
    #[arg(long, value_name = "P")]
    pub port: Option<u16>,
    /// Append every request to this file, one JSON object per line
    #[arg(long, value_name = "PATH")]
    pub request_log: Option<PathBuf>,
}

pub async fn run(command: FakeModelCommand) -> Result<u8, Failure> {
    match command {
        FakeModelCommand::List => list(),
        FakeModelCommand::Serve(args) => serve(args).await,
    }
}

/// A built-in name, or a path when the argument names an existing file or ends like one.
pub fn load_scenario(which: &str) -> Result<Scenario, Failure> {
    let path = Path::new(which);
    let looks_like_file = path.exists()
        || which.ends_with(".toml")
        || which.ends_with(".json")
        || which.contains('/');
    let loaded = if looks_like_file {
        Scenario::from_path(path)
    } else {
        Scenario::builtin(which)
    };
    loaded.map_err(|e| Failure::Usage(format!("scenario {which:?}: {e}")))
}

fn list() -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    for name in Scenario::builtin_names() {
        let description = Scenario::builtin(name)
            .ok()
            .and_then(|s| s.description)
            .unwrap_or_default();
        writeln!(out, "{name:<26}{description}")?;
    }
    Ok(0)
}

async fn serve(args: ServeArgs) -> Result<u8, Failure> {
    let scenario = load_scenario(&args.scenario)?;
    let options = FakeModelOptions {
        port: args.port,
        request_log_path: args.request_log,
    };
    let server = FakeModelServer::start(scenario, options)
        .await
        .map_err(|e| Failure::Other(e.into()))?;
    let base_url = server.base_url();
    {
        let mut out = std::io::stdout().lock();
        // A harness reads this first line to learn the port: flush it at once.
        writeln!(out, "listening on {base_url}")?;
        out.flush()?;
        for line in env_help(&base_url) {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    wait_for_stop().await?;
    server
        .shutdown()
        .await
        .map_err(|e| Failure::Other(e.into()))?;
    Ok(0)
}

/// Ctrl-C or SIGTERM.
async fn wait_for_stop() -> std::io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    Ok(())
}

/// What each CLI needs to talk to the server (`docs/real-clis.md`).
fn env_help(base_url: &str) -> Vec<String> {
    vec![
        String::new(),
        "claude:  ANTHROPIC_BASE_URL=".to_owned() + base_url,
        "         ANTHROPIC_API_KEY=sk-fake CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1".to_owned(),
        "codex:   MOCK_API_KEY=x and $CODEX_HOME/config.toml:".to_owned(),
        "         model = \"gpt-5.5\"  model_provider = \"mock\"".to_owned(),
        format!(
            "         [model_providers.mock] name = \"mock\" base_url = \"{base_url}/v1\" env_key = \"MOCK_API_KEY\" wire_api = \"responses\""
        ),
        "gemini:  GOOGLE_GEMINI_BASE_URL=".to_owned() + base_url,
        "         GEMINI_API_KEY=fake GEMINI_CLI_TRUST_WORKSPACE=true and ~/.gemini/settings.json:".to_owned(),
        "         {\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}}}".to_owned(),
        String::new(),
        "Ctrl-C stops the server.".to_owned(),
    ]
}
