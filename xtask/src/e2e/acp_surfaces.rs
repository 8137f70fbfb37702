//! The acp group's other entry points: an ACP agent configured by `forge.toml` alone works
//! through `stream --jsonl`, `task run` and `serve` as through `run` (the issue's "done
//! when"). Each case reuses the `run` cases' setup ([`super::acp::prepare`]), the task
//! group's repository helpers and the serve group's HTTP client.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use super::acp::{TIMEOUT, ensure_success, prepare, status};
use super::api::{Serve, post_run, subscribe};
use super::case_run::{Suite, isolate_env, run_with_watchdog};
use super::task::{commits_on, make_repo};

/// `stream --jsonl` on a write, read and shell scenario: one JSON event per line, then the
/// result; the events hold text, a tool call with its end, and (but codex-acp, which
/// reports no tokens) usage.
pub fn stream(suite: &Suite, cli: &str) -> anyhow::Result<()> {
    let c = prepare(suite, cli, "acp_stream", "write_read_shell")?;
    let mut command = Command::new(&suite.forge);
    command
        .arg("stream")
        .args(["--provider", &c.provider, "--workdir"])
        .arg(&c.workspace)
        .args(["--jsonl", "--permission-mode", "bypass"])
        .args(["--timeout", &TIMEOUT.as_secs().to_string()])
        .arg("Write notes.txt, read it back and count its lines.");
    isolate_env(&mut command, suite);
    let output = run_with_watchdog(command, TIMEOUT + Duration::from_secs(30))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .with_context(|| format!("a line that is not JSON in: {stdout}"))?;
    let (result, events) = lines.split_last().context("no output")?;
    ensure_success(result)?;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    ensure!(events.len() == kinds.len(), "an event line without a type");
    for wanted in ["text", "tool_call_started", "tool_call_finished"] {
        ensure!(kinds.contains(&wanted), "no {wanted} event in {kinds:?}");
    }
    ensure!(
        events
            .iter()
            .any(|e| e["type"] == "tool_call_started" && e["kind"] == "shell"),
        "no shell tool call among the events"
    );
    if cli != "codex" {
        let usage = events
            .iter()
            .any(|e| e.pointer("/usage/input_tokens").and_then(Value::as_u64) > Some(0));
        ensure!(usage, "no event carries usage: {kinds:?}");
    }
    Ok(())
}

/// `task run` with the agent: the change validated by the repository's test and committed
/// on the task branch.
pub fn task(suite: &Suite, cli: &str) -> anyhow::Result<()> {
    let c = prepare(suite, cli, "acp_task", "write_file")?;
    let repo = c.workspace.with_file_name("repo");
    let mut toml = std::fs::read_to_string(c.workspace.join("forge.toml"))?;
    toml.push_str(
        "\n[validation]\ntest = \"sh test.sh\"\ntimeout_ms = 60000\n\n[task]\ntimeout_ms = 240000\n\
         \n[delivery]\nauthor = \"Forge E2E <forge-e2e@example.invalid>\"\nreconcile_grace_ms = 0\n",
    );
    let test = "[ \"$(cat hello.txt 2>/dev/null)\" = hi ] || { echo 'FAIL: hello.txt is not hi'; exit 1; }\n";
    make_repo(
        &repo,
        &[
            ("forge.toml", toml.into_bytes()),
            ("test.sh", test.as_bytes().to_vec()),
            (".gitignore", b".forgecode/\n".to_vec()),
        ],
    )?;
    let mut command = Command::new(&suite.forge);
    command
        .args(["task", "run", "--provider", &c.provider, "--json", "--repo"])
        .arg(&repo)
        .args(["--timeout", "240"])
        .arg("Create a file hello.txt containing 'hi'.");
    isolate_env(&mut command, suite);
    let output = run_with_watchdog(command, Duration::from_secs(300))?;
    let report: Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "no JSON report (exit {:?}); stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let s = |p: &str| report.pointer(p).and_then(Value::as_str).unwrap_or("");
    ensure!(
        s("/status") == "committed",
        "status {} stop {} (report {report})",
        s("/status"),
        s("/stop_reason")
    );
    ensure!(
        report.pointer("/cycles/0/validation/passed") == Some(&Value::Bool(true)),
        "validation did not pass: {report}"
    );
    let branch = s("/branch");
    ensure!(
        commits_on(&repo, branch) == Some(1),
        "not one commit on {branch}"
    );
    let shown = Command::new("git")
        .args(["show", &format!("{branch}:hello.txt")])
        .current_dir(&repo)
        .output()?;
    ensure!(
        shown.stdout == b"hi\n",
        "hello.txt on {branch}: {:?}",
        String::from_utf8_lossy(&shown.stdout)
    );
    Ok(())
}

/// `serve`: POST a run naming the agent, read its SSE events to the result; the file is on
/// disk.
pub fn serve(suite: &Suite, cli: &str) -> anyhow::Result<()> {
    let c = prepare(suite, cli, "acp_serve", "write_file")?;
    let root = c.workspace.parent().context("workspace root")?;
    let server = Serve::start(suite, root, &[])?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (kinds, result) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let body = json!({
            "provider": c.provider,
            "prompt": "Create a file hello.txt containing 'hi'.",
            "workdir": c.workspace,
            "permission_mode": "bypass",
            "timeout_ms": TIMEOUT.as_millis() as u64,
        });
        let run_id = post_run(&client, &server, body).await?;
        let mut reader = subscribe(&client, &server, &run_id).await?;
        let mut kinds = Vec::new();
        while let Some(message) = reader.next().await? {
            if message.event == "result" {
                let result: Value = serde_json::from_str(&message.data)?;
                return Ok::<_, anyhow::Error>((kinds, result));
            }
            kinds.push(message.event);
        }
        anyhow::bail!("the SSE stream ended without a result after {kinds:?}")
    })?;
    ensure!(
        status(&result) == "success",
        "status {} (errors: {})",
        status(&result),
        result["errors"]
    );
    for wanted in ["text", "tool_call_started"] {
        ensure!(
            kinds.iter().any(|k| k == wanted),
            "no {wanted} SSE event in {kinds:?}"
        );
    }
    let text =
        std::fs::read_to_string(c.workspace.join("hello.txt")).context("hello.txt not written")?;
    ensure!(text == "hi\n", "hello.txt holds {text:?}");
    Ok(())
}
