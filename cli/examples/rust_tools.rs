//! The library's tool-calling example, and the binary the end-to-end suite drives
//! (`xtask/src/e2e/mcp.rs`): Rust functions registered with `CodeAgent::builder().tool(…)`,
//! served to whichever CLI runs over forge's per-run MCP server.
//!
//! ```text
//! cargo run -p forge-cli --example rust_tools -- --provider claude --workdir . \
//!     [--timeout-secs N] [--cancel-after-ms N] "Echo hello through the echo tool"
//! ```
//!
//! Prints one JSON object: `{"result": <ExecutionResult>, "servers": N, "ports_left": [...]}`,
//! where `ports_left` lists tool-server addresses still accepting connections after the run
//! (always empty: the server is stopped however the run ends).
//!
//! Tools: `echo {text}`, `fail {}` (returns an error), `boom {}` (panics),
//! `write_note {path, text}` (`path` is a path argument: confined to the workspace),
//! `slow {ms}` (sleeps), `kill_cli {}` (SIGKILLs the running CLI's process group: a crash).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use forge_app::CodeAgent;
use forge_app::from_config::apply_request_defaults;
use forge_domain::{ForgeError, HostedTool, PermissionMode};
use forge_ports::{ToolContext, ToolHost, ToolRun, ToolServer};
use serde_json::{Value, json};

/// Wraps the real host to remember where each server listened.
struct RecordingHost {
    inner: Arc<dyn ToolHost>,
    addresses: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl ToolHost for RecordingHost {
    async fn start(&self, run: ToolRun) -> Result<Box<dyn ToolServer>, ForgeError> {
        let server = self.inner.start(run).await?;
        let address = server
            .endpoint()
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        if let Ok(mut all) = self.addresses.lock() {
            all.push(address);
        }
        Ok(server)
    }
}

fn tool(name: &str, description: &str, schema: Value) -> anyhow::Result<HostedTool> {
    Ok(HostedTool::new(name, description, schema)?)
}

fn tool_error(tool: &str, message: impl Into<String>) -> ForgeError {
    ForgeError::ToolExecution {
        tool: tool.to_owned(),
        message: message.into(),
    }
}

/// SIGKILL to the process group of every child of this process (the CLI and its children).
fn kill_children() -> usize {
    let me = std::process::id().to_string();
    let mut killed = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …: the fields after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1) == Some(&me.as_str()) {
            if let Some(pgrp) = fields.get(2).and_then(|p| p.parse::<i32>().ok()) {
                let group = nix::unistd::Pid::from_raw(pgrp);
                if nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL).is_ok() {
                    killed += 1;
                }
            }
        }
    }
    killed
}

struct Args {
    provider: String,
    workdir: PathBuf,
    timeout_secs: Option<u64>,
    cancel_after_ms: Option<u64>,
    prompt: String,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        provider: "claude".into(),
        workdir: ".".into(),
        timeout_secs: None,
        cancel_after_ms: None,
        prompt: String::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| anyhow::anyhow!("{arg} needs a value"))
        };
        match arg.as_str() {
            "--provider" => args.provider = value()?,
            "--workdir" => args.workdir = value()?.into(),
            "--timeout-secs" => args.timeout_secs = Some(value()?.parse()?),
            "--cancel-after-ms" => args.cancel_after_ms = Some(value()?.parse()?),
            _ => args.prompt = arg,
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let flags = forge_cli::ConfigFlags {
        provider: Some(args.provider.clone()),
        workdir: args.workdir.clone(),
        timeout_ms: args.timeout_secs.map(|s| s * 1000),
        ..forge_cli::ConfigFlags::default()
    };
    let config = forge_cli::load_config(&flags)?;
    let addresses = Arc::new(Mutex::new(Vec::new()));
    let host = RecordingHost {
        inner: forge_cli::tool_host(),
        addresses: Arc::clone(&addresses),
    };
    let path_schema = json!({"type": "object", "properties": {
        "path": {"type": "string", "format": "path"}, "text": {"type": "string"}}});
    let agent =
        CodeAgent::builder_from_config(&config, forge_cli::registry(), forge_cli::runtime())?
            .redactor(forge_cli::environment_redactor())
            .tool_host(Arc::new(host))
            .tool(
                tool(
                    "echo",
                    "Echoes its text back",
                    json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                )?,
                |args: Value, _ctx: ToolContext| async move {
                    let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                    Ok(Value::String(format!("echo:{text}")))
                },
            )
            .tool(
                tool("fail", "Always fails", json!({"type": "object"}))?,
                |_args, _ctx| async {
                    Err(tool_error("fail", "deliberate failure from the fail tool"))
                },
            )
            .tool(
                tool("boom", "Panics", json!({"type": "object"}))?,
                |_args, _ctx| async {
                    #[expect(
                        clippy::panic,
                        reason = "the tool exists to show a panic is contained"
                    )]
                    {
                        panic!("boom tool panicked on purpose")
                    }
                },
            )
            .tool(
                tool(
                    "write_note",
                    "Writes text to a file in the workspace",
                    path_schema,
                )?,
                |args: Value, ctx: ToolContext| async move {
                    let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
                    let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                    ctx.workspace
                        .write_file(
                            &ctx.workspace_root,
                            std::path::Path::new(path),
                            text.as_bytes(),
                        )
                        .await?;
                    Ok(Value::String(format!("wrote {path}")))
                },
            )
            .tool(
                tool(
                    "slow",
                    "Sleeps",
                    json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
                )?
                .with_timeout_ms(600_000),
                |args: Value, _ctx| async move {
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(1000);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(Value::String(format!("slept {ms} ms")))
                },
            )
            .tool(
                tool(
                    "kill_cli",
                    "Kills the CLI (a crash)",
                    json!({"type": "object"}),
                )?,
                |_args, _ctx| async {
                    let killed = kill_children();
                    Ok(Value::String(format!("killed {killed} process group(s)")))
                },
            )
            .build()?;

    let mut request = agent.request(args.prompt);
    request.workdir = args.workdir;
    apply_request_defaults(&config, &mut request);
    request.permission_mode = Some(PermissionMode::Bypass);
    let handle = agent.start(request);
    if let Some(ms) = args.cancel_after_ms {
        let canceller = handle.canceller();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            canceller.cancel();
        });
    }
    let result = handle.result().await;

    let started: Vec<String> = addresses.lock().map(|a| a.clone()).unwrap_or_default();
    let mut ports_left = Vec::new();
    for address in &started {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            ports_left.push(address.clone());
        }
    }
    let report = json!({"result": result, "servers": started.len(), "ports_left": ports_left});
    #[expect(clippy::print_stdout, reason = "the example's output is its report")]
    {
        println!("{report}");
    }
    Ok(())
}
