//! The acp group: each real CLI's Agent Client Protocol agent (`gemini --acp`, codex-acp,
//! claude-agent-acp, pinned beside the CLIs) as a `kind = "acp"` provider configured by a
//! `forge.toml` alone, against the fake model: text, a file written on disk, a command that
//! really ran, two turns in one session by resume, an HTTP 500 from the model, and Ctrl-C;
//! then the same agents through `stream --jsonl`, `task run` and `serve`
//! ([`super::acp_surfaces`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use forge_cli::offline::configure_acp;
use serde_json::Value;

use super::case_run::{Suite, isolate_env, run_with_watchdog};
use super::summary::Verdict;
use super::{Ctx, ServerProcess, say};

pub(super) const TIMEOUT: Duration = Duration::from_secs(120);

/// The cases, in the order each provider runs them.
const CASES: [&str; 9] = [
    "acp_text",
    "acp_file_write",
    "acp_shell",
    "acp_resume",
    "acp_http_500",
    "acp_cancel",
    "acp_stream",
    "acp_task",
    "acp_serve",
];

pub fn names() -> Vec<&'static str> {
    CASES.to_vec()
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let threads: Vec<_> = ctx
        .providers
        .iter()
        .map(|&cli| {
            let suite = ctx.suite.clone();
            let cases: Vec<&'static str> = CASES
                .into_iter()
                .filter(|c| ctx.scenarios.contains(c))
                .collect();
            std::thread::spawn(move || {
                cases
                    .into_iter()
                    .map(|case| {
                        let started = Instant::now();
                        let outcome = run_case(&suite, cli, case);
                        say(&format!(
                            "acp {case:<10} {cli:<7} {}",
                            match &outcome {
                                Ok(()) => "ok".to_owned(),
                                Err(e) => format!("FAILED: {e:#}"),
                            }
                        ));
                        Verdict {
                            seconds: started.elapsed().as_secs_f64(),
                            ..Verdict::of(case, cli, outcome)
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    Ok(threads
        .into_iter()
        .filter_map(|t| t.join().ok())
        .flatten()
        .collect())
}

/// A case's workspace and its agent, configured against a fake model of its own.
pub(super) struct Case {
    pub(super) workspace: PathBuf,
    pub(super) provider: String,
    pub(super) _server: ServerProcess,
}

pub(super) fn prepare(
    suite: &Suite,
    cli: &str,
    case: &str,
    scenario: &str,
) -> anyhow::Result<Case> {
    let root = suite.work.join(case).join(cli);
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace)?;
    let server = ServerProcess::start(&suite.forge, scenario, &root.join("requests.jsonl"))?;
    let agent = configure_acp(cli, &suite.clis, &server.base_url, &root)?;
    std::fs::write(workspace.join("forge.toml"), &agent.project_toml)?;
    Ok(Case {
        workspace,
        provider: agent.provider,
        _server: server,
    })
}

fn forge(suite: &Suite, case: &Case, prompt: &str, resume: Option<&str>) -> Command {
    let mut command = Command::new(&suite.forge);
    command
        .arg("run")
        .args(["--provider", &case.provider])
        .arg("--workdir")
        .arg(&case.workspace)
        .args(["--json", "--permission-mode", "bypass"])
        .args(["--timeout", &TIMEOUT.as_secs().to_string()]);
    if let Some(session) = resume {
        command.arg(format!("--resume={session}"));
    }
    command.arg(prompt);
    isolate_env(&mut command, suite);
    command
}

/// One `run --json`: its printed result.
fn run_forge(
    suite: &Suite,
    case: &Case,
    prompt: &str,
    resume: Option<&str>,
) -> anyhow::Result<Value> {
    let output = run_with_watchdog(
        forge(suite, case, prompt, resume),
        TIMEOUT + Duration::from_secs(30),
    )?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout).with_context(|| {
        format!(
            "no JSON result (exit {:?}); stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub(super) fn status(result: &Value) -> &str {
    result["status"].as_str().unwrap_or("")
}

pub(super) fn ensure_success(result: &Value) -> anyhow::Result<()> {
    ensure!(
        status(result) == "success",
        "status {} (errors: {})",
        status(result),
        result["errors"]
    );
    ensure!(
        result
            .pointer("/metadata/session_id")
            .is_some_and(|s| s.is_string()),
        "no session id"
    );
    Ok(())
}

fn run_case(suite: &Suite, cli: &str, case: &str) -> anyhow::Result<()> {
    match case {
        "acp_text" => {
            let c = prepare(suite, cli, case, "plain_answer")?;
            let r = run_forge(suite, &c, "Say hello.", None)?;
            ensure_success(&r)?;
            ensure!(
                r["content"].as_str().is_some_and(|t| t.contains("Hello")),
                "content {}",
                r["content"]
            );
            // gemini and claude report tokens; codex-acp 0.16 reports only its context window.
            if cli != "codex" {
                ensure!(
                    r.pointer("/metadata/usage/input_tokens")
                        .and_then(Value::as_u64)
                        > Some(0),
                    "no usage"
                );
            }
            if cli == "claude" {
                ensure!(
                    r.pointer("/metadata/cost_usd")
                        .and_then(Value::as_f64)
                        .is_some(),
                    "claude reports its cost"
                );
            }
            Ok(())
        }
        "acp_file_write" => {
            let c = prepare(suite, cli, case, "write_file")?;
            let r = run_forge(suite, &c, "Create a file hello.txt containing 'hi'.", None)?;
            ensure_success(&r)?;
            let text = std::fs::read_to_string(c.workspace.join("hello.txt"))
                .context("hello.txt not written")?;
            ensure!(text == "hi\n", "hello.txt holds {text:?}");
            Ok(())
        }
        "acp_shell" => {
            let c = prepare(suite, cli, case, "write_read_shell")?;
            let r = run_forge(
                suite,
                &c,
                "Write notes.txt, read it back and count its lines.",
                None,
            )?;
            ensure_success(&r)?;
            let shell = r["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["kind"] == "shell")
                .context("no shell tool call")?;
            ensure!(shell["is_error"] == false, "the command failed: {shell}");
            // It really ran: its output went back to the model (gemini's ACP updates carry
            // no output, so the fake model's request log is the witness for all three).
            let log = std::fs::read_to_string(c.workspace.with_file_name("requests.jsonl"))?;
            ensure!(
                log.contains("2 notes.txt"),
                "the output of `wc -l notes.txt` never reached the model"
            );
            Ok(())
        }
        "acp_resume" => {
            let c = prepare(suite, cli, case, "resume")?;
            let first = run_forge(suite, &c, "Remember the word 'kiwi'.", None)?;
            ensure_success(&first)?;
            let session = first["metadata"]["session_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let second = run_forge(
                suite,
                &c,
                "Which word did I ask you to remember?",
                Some(&session),
            )?;
            if cli == "gemini" && status(&second) == "error" {
                // gemini 0.61's `session/load` races with itself: loading re-initialises the
                // session's recording, which rewrites the session file's messages to the bare
                // context (a `$set` record) — when that write lands before the file is read,
                // gemini answers "No previous sessions found for this project" (a bare
                // JSON-RPC client gets the same). Either outcome is gemini's; forge's part is
                // to report that as an error with gemini's words, never to start a new session.
                ensure!(
                    second["errors"]
                        .to_string()
                        .contains("No previous sessions"),
                    "gemini resume: errors {}",
                    second["errors"]
                );
                return Ok(());
            }
            ensure_success(&second)?;
            ensure!(
                second["metadata"]["session_id"] == first["metadata"]["session_id"],
                "another session"
            );
            ensure!(
                second["content"]
                    .as_str()
                    .is_some_and(|t| t.contains("kiwi")),
                "content {}",
                second["content"]
            );
            // An unknown session is an error, never a silent new session.
            let unknown = run_forge(suite, &c, "again", Some("no-such-session"))?;
            ensure!(
                status(&unknown) == "error",
                "resuming an unknown session: {}",
                status(&unknown)
            );
            Ok(())
        }
        "acp_http_500" => {
            let c = prepare(suite, cli, case, "server_error_always")?;
            if cli == "gemini" {
                // Gemini retries a 500 for minutes by default; a user bounds it with
                // `general.maxAttempts` in their settings, as this case's user does.
                let root = suite.work.join(case).join(cli);
                let settings = serde_json::json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"maxAttempts": 2},
                });
                std::fs::write(
                    root.join("home/.gemini/settings.json"),
                    settings.to_string(),
                )?;
            }
            let r = run_forge(suite, &c, "Say hello.", None)?;
            ensure!(
                status(&r) == "error",
                "status {} after HTTP 500s",
                status(&r)
            );
            ensure!(
                r["errors"].as_array().is_some_and(|e| !e.is_empty()),
                "no error"
            );
            Ok(())
        }
        "acp_cancel" => cancel(suite, cli),
        "acp_stream" => super::acp_surfaces::stream(suite, cli),
        "acp_task" => super::acp_surfaces::task(suite, cli),
        "acp_serve" => super::acp_surfaces::serve(suite, cli),
        other => bail!("unknown case {other}"),
    }
}

/// Ctrl-C while the agent streams a slow answer: partial, cancelled, forge gone promptly.
fn cancel(suite: &Suite, cli: &str) -> anyhow::Result<()> {
    // Beside the case directory, which `prepare` clears.
    let dir = suite.work.join("acp_cancel");
    std::fs::create_dir_all(&dir)?;
    let scenario = dir.join(format!("{cli}.slow.toml"));
    std::fs::write(
        &scenario,
        "name = \"slow\"\ndescription = \"a slow answer\"\nprompts = [\"Count slowly.\"]\n\n[[turns]]\ntext = \"one two three four five six seven eight nine ten eleven twelve\"\nchunks = 12\nchunk_delay_ms = 2000\n",
    )?;
    let c = prepare(suite, cli, "acp_cancel", &scenario.to_string_lossy())?;
    let mut command = forge(suite, &c, "Count slowly.", None);
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Cancel once the answer has begun: its first words are in the run's bundle.
    let started = Instant::now();
    while !answer_began(&c.workspace) {
        ensure!(
            started.elapsed() < Duration::from_secs(60),
            "the answer never began"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let signalled = Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()?;
    let output = child.wait_with_output()?;
    let took = signalled.elapsed();
    let r: Value = serde_json::from_slice(&output.stdout).context("no JSON result after Ctrl-C")?;
    ensure!(
        status(&r) == "partial",
        "status {} after Ctrl-C",
        status(&r)
    );
    ensure!(
        r["metadata"]["stop_reason"] == "cancelled",
        "stop reason {}",
        r["metadata"]["stop_reason"]
    );
    ensure!(
        took < Duration::from_secs(15),
        "forge took {took:?} to stop"
    );
    Ok(())
}

fn answer_began(workspace: &Path) -> bool {
    super::case_run::run_dirs(workspace)
        .last()
        .and_then(|d| std::fs::read_to_string(d.join("events.jsonl")).ok())
        .is_some_and(|events| events.contains("\"text\""))
}
