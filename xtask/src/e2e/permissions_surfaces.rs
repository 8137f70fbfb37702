//! The permissions group's other places to answer: the terminal (`run` under a
//! pseudo-terminal, answered `y` at its prompt) and `serve`'s API (`GET /v1/permissions`,
//! `POST /v1/permissions/{id}` twice, the events on the run's SSE stream); and the refusal
//! of `ask` by codex and gemini as their own CLIs, which cannot ask (exit 2, naming the ACP
//! provider to use).

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use super::api::{Serve, post_run, subscribe};
use super::case_run::{Suite, isolate_env, run_with_watchdog};
use super::permissions::{ASK_ONCE, Agent, PROMPT, TIMEOUT, prepare};

/// What the terminal prompt asks (`cli/src/cmd/run_prompt.rs`).
const QUESTION: &str = "y / a(lways) / n";

/// `run --permission-mode ask` with a terminal for its stdin, stdout and stderr: the request
/// is shown, the prompt answered `y`, the command runs.
pub fn terminal(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_terminal", ASK_ONCE)?;
    let pty = nix::pty::openpty(
        None::<&nix::pty::Winsize>,
        None::<&nix::sys::termios::Termios>,
    )
    .context("openpty")?;
    let mut command = case.run_command(suite, false);
    command
        .stdin(pty.slave.try_clone()?)
        .stdout(pty.slave.try_clone()?)
        .stderr(pty.slave);
    let mut child = command.spawn().context("starting forge-code-agent run")?;
    // Our copies of the terminal's side closed: the master reads end when forge's do.
    drop(command);
    let mut master = std::fs::File::from(pty.master);
    let mut writer = master.try_clone()?;
    let screen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let screen = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                screen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_str(&text);
            }
        })
    };
    let seen = || {
        screen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    };
    let deadline = Instant::now() + TIMEOUT;
    let mut answered = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !answered && seen().contains(QUESTION) {
            writer.write_all(b"y\n")?;
            answered = true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("no end after {TIMEOUT:?}; the terminal showed:\n{}", seen());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(writer);
    let _ = reader.join();
    let shown = seen();
    ensure!(answered, "the terminal never asked; it showed:\n{shown}");
    ensure!(
        status.success(),
        "exit {:?}; the terminal showed:\n{shown}",
        status.code()
    );
    ensure!(
        case.made(),
        "answered y, yet made.txt is not there:\n{shown}"
    );
    ensure!(
        shown.contains("made.txt"),
        "the prompt did not name the command:\n{shown}"
    );
    Ok(())
}

/// `serve`: a run in `ask` through the API; its request listed, allowed once, a second
/// decision 409 naming the first; `permission_requested` and `permission_decided` on the
/// run's stream; the command ran.
pub fn serve(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_serve", ASK_ONCE)?;
    let server = Serve::start(suite, &case.root, &case.env)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let kinds = runtime.block_on(async {
        let client = reqwest::Client::new();
        let body = json!({
            "provider": case.provider,
            "prompt": PROMPT,
            "workdir": case.workspace,
            "permission_mode": "ask",
            "timeout_ms": TIMEOUT.as_millis() as u64,
        });
        let run_id = post_run(&client, &server, body).await?;
        let mut reader = subscribe(&client, &server, &run_id).await?;
        let mut kinds = Vec::new();
        while let Some(message) = reader.next().await? {
            if message.event == "result" {
                let result: Value = serde_json::from_str(&message.data)?;
                ensure!(
                    result["status"] == "success",
                    "status {} (errors {})",
                    result["status"],
                    result["errors"]
                );
                return Ok::<_, anyhow::Error>(kinds);
            }
            if message.event == "permission_requested" {
                answer(&client, &server, &run_id).await?;
            }
            kinds.push(message.event);
        }
        bail!("the SSE stream ended without a result after {kinds:?}")
    })?;
    for wanted in ["permission_requested", "permission_decided"] {
        ensure!(
            kinds.iter().any(|k| k == wanted),
            "no {wanted} on the run's SSE stream: {kinds:?}"
        );
    }
    ensure!(
        case.made(),
        "allowed through the API, yet made.txt is not there"
    );
    Ok(())
}

/// The run's pending request from `GET /v1/permissions`, allowed, then decided again.
async fn answer(client: &reqwest::Client, server: &Serve, run_id: &str) -> anyhow::Result<()> {
    let listed: Value = client
        .get(server.url("/v1/permissions"))
        .send()
        .await?
        .json()
        .await?;
    let request = listed["permissions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["owner"]["run"] == run_id)
        .with_context(|| format!("the run's request is not listed: {listed}"))?;
    ensure!(
        request["summary"]
            .as_str()
            .is_some_and(|s| s.contains("made.txt"))
            || request["tool"].to_string().contains("made.txt"),
        "the listed request does not name the command: {request}"
    );
    let id = request["id"].as_str().context("no id")?;
    let url = server.url(&format!("/v1/permissions/{id}"));
    let first = client
        .post(&url)
        .json(&json!({"decision": "allow"}))
        .send()
        .await?;
    ensure!(first.status() == 200, "allow: {}", first.status());
    let second = client
        .post(&url)
        .json(&json!({"decision": "deny", "message": "too late"}))
        .send()
        .await?;
    let status = second.status();
    let body: Value = second.json().await?;
    ensure!(status == 409, "a second decision: {status} {body}");
    ensure!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("already decided: allow")),
        "the 409 does not name the first decision: {body}"
    );
    Ok(())
}

/// codex and gemini as their own CLIs cannot ask: `run --permission-mode ask` is refused
/// (exit 2) before anything starts, naming the ACP provider to use instead.
pub fn refused(suite: &Suite, cli: &str) -> anyhow::Result<()> {
    let dir = suite.work.join("perm_refused").join(cli);
    std::fs::create_dir_all(&dir)?;
    let mut command = Command::new(&suite.forge);
    isolate_env(&mut command, suite);
    command
        .arg("run")
        .args(["--provider", cli, "--workdir"])
        .arg(&dir)
        .args(["--permission-mode", "ask", "--json", PROMPT]);
    let output = run_with_watchdog(command, Duration::from_secs(30))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(
        output.status.code() == Some(2),
        "exit {:?}: {stderr}",
        output.status.code()
    );
    ensure!(
        stderr.contains(&format!("{cli}-acp")) || stderr.contains("--acp"),
        "the refusal does not name the ACP provider: {stderr}"
    );
    Ok(())
}
