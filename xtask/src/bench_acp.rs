//! `cargo xtask bench --acp`: what forge adds in front of an Agent Client Protocol agent.
//!
//! For each of the three agents (`gemini --acp`, codex-acp, claude-agent-acp), configured by
//! a `forge.toml` alone as the e2e `acp` group does, on the fake model's `plain_answer`,
//! alternating in the same run:
//! - a bare ACP client ([`bare`]): a few lines of JSON-RPC over the agent's stdio
//!   (forge's own `initialize`, so both offer the same capabilities, then `session/new`,
//!   `session/prompt`), nothing else;
//! - `forge-code-agent stream --jsonl --provider <agent>`.
//!
//! Both are timed from spawn, the same agent binary with the same environment: to the first
//! `session/update` against forge's first event after `session_started` (forge reports the
//! session itself, before any update), and to the first `agent_message_chunk` against
//! forge's first `text` event. Medians and the median of the paired differences are printed;
//! the target is forge ≤ +30 ms.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use forge_app::config::{PROJECT_FILE, defaults, merge, parse_file};
use forge_cli::offline::configure_acp;
use serde_json::{Value, json};

use crate::bench::median;
use crate::e2e::{PROVIDERS, ServerProcess, Suite, isolate_env, say};

const SCENARIO: &str = "plain_answer";
const PROMPT: &str = "Say hello.";

/// Milliseconds from spawn to the first update and to the first text.
#[derive(Debug, Clone, Copy)]
struct Times {
    update: f64,
    text: f64,
}

/// One agent's row: (agent, bare medians, forge medians, paired medians).
type Row = (String, Times, Times, Times);

pub fn run(suite: &Suite, runs: usize, only: &[String]) -> anyhow::Result<()> {
    let server = ServerProcess::start(&suite.forge, SCENARIO, &suite.work.join("requests.jsonl"))?;
    let mut rows = Vec::new();
    for cli in PROVIDERS {
        if !only.is_empty() && !only.iter().any(|p| p == cli) {
            continue;
        }
        rows.push(measure(suite, &server, cli, runs.max(1))?);
    }
    let mut out = format!(
        "\nACP time to first event, {SCENARIO}, median of {} runs each (bare client and forge \
         alternating)\n{:<17} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        runs.max(1),
        "agent",
        "bare upd",
        "forge upd",
        "paired",
        "bare text",
        "forge text",
        "paired"
    );
    for (agent, bare, forge, paired) in rows {
        out.push_str(&format!(
            "{agent:<17} {:>10.1} {:>10.1} {:>+10.1} {:>10.1} {:>10.1} {:>+10.1}\n",
            bare.update, forge.update, paired.update, bare.text, forge.text, paired.text
        ));
    }
    out.push_str(
        "upd: the first session/update (forge: its first event after session_started); text: \
         the first agent_message_chunk (forge: its first text event)\n\
         paired: the median of (forge run i - bare run i), in ms\n\
         target: forge adds <= 30 ms\n",
    );
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}

/// The agent's provider settings, read from the `forge.toml` a user would write.
struct Agent {
    provider: String,
    workspace: PathBuf,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn agent(suite: &Suite, server: &ServerProcess, cli: &str) -> anyhow::Result<Agent> {
    let dir = suite.work.join("acp").join(cli);
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace)?;
    let workspace = workspace.canonicalize()?;
    let configured = configure_acp(cli, &suite.clis, &server.base_url, &dir)?;
    let path = workspace.join(PROJECT_FILE);
    std::fs::write(&path, &configured.project_toml)?;
    let config = merge(&[defaults(), parse_file(&configured.project_toml, &path)?]);
    let settings = config.settings(&configured.provider);
    let (program, args) = settings
        .command
        .split_first()
        .context("no command in the agent's section")?;
    Ok(Agent {
        provider: configured.provider,
        workspace,
        program: PathBuf::from(program),
        args: args.to_vec(),
        env: settings.env.into_iter().collect(),
    })
}

fn measure(suite: &Suite, server: &ServerProcess, cli: &str, runs: usize) -> anyhow::Result<Row> {
    let agent = agent(suite, server, cli)?;
    // One run of each first, not counted: the agents' caches warm up.
    bare(suite, &agent)?;
    forge(suite, &agent)?;
    let (mut bare_runs, mut forge_runs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        bare_runs.push(bare(suite, &agent)?);
        forge_runs.push(forge(suite, &agent)?);
    }
    let shown = |times: &[Times]| {
        times
            .iter()
            .map(|t| format!("{:.0}/{:.0}", t.update, t.text))
            .collect::<Vec<_>>()
            .join(" ")
    };
    say(&format!(
        "{} (update/text ms): bare {}; forge {}",
        agent.provider,
        shown(&bare_runs),
        shown(&forge_runs)
    ));
    let medians = |times: &[Times]| Times {
        update: median(&mut times.iter().map(|t| t.update).collect::<Vec<_>>()),
        text: median(&mut times.iter().map(|t| t.text).collect::<Vec<_>>()),
    };
    let paired: Vec<Times> = forge_runs
        .iter()
        .zip(&bare_runs)
        .map(|(f, b)| Times {
            update: f.update - b.update,
            text: f.text - b.text,
        })
        .collect();
    Ok((
        agent.provider,
        medians(&bare_runs),
        medians(&forge_runs),
        medians(&paired),
    ))
}

/// The bare client: the agent spawned in its own process group (all of it killed after),
/// three requests, stdout read line by line to the prompt's answer.
fn bare(suite: &Suite, agent: &Agent) -> anyhow::Result<Times> {
    let mut command = Command::new(&agent.program);
    command
        .args(&agent.args)
        .current_dir(&agent.workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    isolate_env(&mut command, suite);
    command.envs(agent.env.iter().map(|(k, v)| (k, v)));
    let started = Instant::now();
    let mut child = command.spawn().context("spawning the agent")?;
    let outcome = converse(&mut child, agent, started);
    end_group(&mut child);
    outcome
}

fn converse(child: &mut Child, agent: &Agent, started: Instant) -> anyhow::Result<Times> {
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let send = |stdin: &mut ChildStdin, id: u64, method: &str, params: Value| {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}")
    };
    // forge's own `initialize` (id 0), so the agent is offered the same capabilities.
    writeln!(stdin, "{}", forge_adapter_acp::flow::initialize_request())?;
    let (mut update, mut text) = (None, None);
    let mut session = None;
    for line in lines.by_ref() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let ms = || started.elapsed().as_secs_f64() * 1000.0;
        if message["method"] == "session/update" {
            update.get_or_insert_with(ms);
            if message.pointer("/params/update/sessionUpdate")
                == Some(&json!("agent_message_chunk"))
            {
                text.get_or_insert_with(ms);
            }
            continue;
        }
        if message.get("method").is_some() && message.get("id").is_some() {
            // A request of the agent's (a permission, a file): this client serves none.
            let refusal = json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not supported by the bench client"}});
            writeln!(stdin, "{refusal}")?;
            continue;
        }
        if let Some(error) = message.get("error") {
            bail!(
                "{} answered {} with an error: {error}",
                agent.provider,
                message["id"]
            );
        }
        match message["id"].as_u64() {
            Some(0) => send(
                &mut stdin,
                1,
                "session/new",
                json!({"cwd": agent.workspace, "mcpServers": []}),
            )?,
            Some(1) => {
                let id = message
                    .pointer("/result/sessionId")
                    .cloned()
                    .context("no sessionId")?;
                send(
                    &mut stdin,
                    2,
                    "session/prompt",
                    json!({"sessionId": id, "prompt": [{"type": "text", "text": PROMPT}]}),
                )?;
                session = Some(id);
            }
            Some(2) => break,
            _ => {}
        }
    }
    match (update, text, session) {
        (Some(update), Some(text), Some(_)) => Ok(Times { update, text }),
        _ => bail!(
            "{}: the prompt ended without an update and a text",
            agent.provider
        ),
    }
}

/// SIGKILL to the agent's whole process group (node and what it started), then reaped.
fn end_group(child: &mut Child) {
    if let Ok(pgid) = i32::try_from(child.id()) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.wait();
}

/// `stream --jsonl` through forge: the first event after `session_started`, the first text.
fn forge(suite: &Suite, agent: &Agent) -> anyhow::Result<Times> {
    let mut command = Command::new(&suite.forge);
    command
        .arg("stream")
        .args(["--provider", &agent.provider, "--workdir"])
        .arg(&agent.workspace)
        .args(["--jsonl", "--timeout", "90", PROMPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    isolate_env(&mut command, suite);
    let started = Instant::now();
    let mut child = command.spawn().context("spawning forge")?;
    let stdout = child.stdout.take().context("stdout")?;
    let (mut update, mut text) = (None, None);
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("session_started") | None => {}
            Some(kind) => {
                update.get_or_insert(ms);
                if kind == "text" {
                    text.get_or_insert(ms);
                }
            }
        }
    }
    let status = child.wait()?;
    match (update, text) {
        (Some(update), Some(text)) => Ok(Times { update, text }),
        _ => bail!("{}: forge printed no text ({status})", agent.provider),
    }
}
