//! The tool-calling engine end to end: the real claude, codex and gemini call tools forge
//! serves over MCP, against the fake model.
//!
//! Rust tools need a binary that registers them: `cargo build -p forge-cli --example
//! rust_tools` (`cli/examples/rust_tools.rs`, the library's example) runs each case in its
//! workspace and prints the result plus the tool-server addresses still listening afterwards
//! (`ports_left`, which must be empty however the run ended). The configured command tool is
//! declared in the workspace's `forge.toml` and runs through the `forge-code-agent run`
//! binary, as a CLI user would.
//!
//! Each case's scenario is written next to its workspace and served by its own
//! `fake-model serve`; a turn's text echoes the last tool result (`{last_tool_output}`), so
//! the final text proves the result reached the model.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use super::cases::{Ending, Expect};
use super::summary::Verdict;
use super::{Ctx, ServerProcess, Suite, pool, prepare, run_forge, say};
use crate::workspace_root;

/// How one case is run and what its result must show.
struct Case {
    name: &'static str,
    /// The `tool_calls` line of the scenario's first turn.
    call: &'static str,
    /// The final text must contain this (the echoed tool result).
    text: Option<&'static str>,
    /// `ExecutionResult.errors[].kind` that must be present.
    error_kind: Option<&'static str>,
    /// The echoed output (or an error message) must contain this.
    error_text: Option<&'static str>,
    how: How,
}

#[derive(Clone, Copy, PartialEq)]
enum How {
    /// A normal run that must succeed.
    Success,
    /// A tool the agent asks for by a name nobody registered: the call fails, the run goes on.
    Unregistered,
    /// The configured command tool, through `forge-code-agent run`.
    Command,
    /// The command tool in the user's own home (no private home; issues 27, 34), under /tmp,
    /// as the suite's user and as a non-root one (`mcp_own_home.rs`). The user's config (for
    /// gemini: their auth type and an MCP server of their own) must be read and left as it was.
    OwnHome,
    /// The run ends early (timeout / cancel / CLI crash): only cleanup is checked.
    Ends {
        timeout_secs: Option<u64>,
        cancel_after_ms: Option<u64>,
    },
}

const CASES: &[Case] = &[
    Case {
        name: "mcp_echo",
        call: r#"{ action = "mcp", tool = "echo", arguments = { text = "forge-e2e-42" } }"#,
        text: Some("echo:forge-e2e-42"),
        error_kind: None,
        error_text: None,
        how: How::Success,
    },
    Case {
        name: "mcp_tool_error",
        call: r#"{ action = "mcp", tool = "fail" }"#,
        text: None,
        error_kind: Some("tool_execution"),
        error_text: Some("deliberate failure"),
        how: How::Success,
    },
    Case {
        name: "mcp_panic",
        call: r#"{ action = "mcp", tool = "boom" }"#,
        text: None,
        error_kind: Some("tool_execution"),
        error_text: Some("panicked"),
        how: How::Success,
    },
    Case {
        name: "mcp_path_escape",
        call: r#"{ action = "mcp", tool = "write_note", arguments = { path = "../escaped.txt", text = "x" } }"#,
        text: None,
        error_kind: Some("workspace_security"),
        error_text: Some("climbs above the workspace root"),
        how: How::Success,
    },
    Case {
        name: "mcp_unregistered",
        call: r#"{ action = "mcp", tool = "not_registered" }"#,
        text: None,
        error_kind: None,
        error_text: None,
        how: How::Unregistered,
    },
    Case {
        name: "mcp_command_tool",
        call: r#"{ action = "mcp", tool = "shout", arguments = { text = "quiet words" } }"#,
        text: Some("QUIET WORDS"),
        error_kind: None,
        error_text: None,
        how: How::Command,
    },
    Case {
        name: "mcp_own_home",
        call: r#"{ action = "mcp", tool = "shout", arguments = { text = "own home" } }"#,
        text: Some("OWN HOME"),
        error_kind: None,
        error_text: None,
        how: How::OwnHome,
    },
    Case {
        name: "mcp_timeout",
        call: r#"{ action = "mcp", tool = "slow", arguments = { ms = 120000 } }"#,
        text: None,
        error_kind: None,
        error_text: None,
        how: How::Ends {
            timeout_secs: Some(12),
            cancel_after_ms: None,
        },
    },
    Case {
        name: "mcp_cancel",
        call: r#"{ action = "mcp", tool = "slow", arguments = { ms = 120000 } }"#,
        text: None,
        error_kind: None,
        error_text: None,
        how: How::Ends {
            timeout_secs: None,
            cancel_after_ms: Some(8000),
        },
    },
    Case {
        name: "mcp_cli_crash",
        call: r#"{ action = "mcp", tool = "kill_cli" }"#,
        text: None,
        error_kind: None,
        error_text: None,
        how: How::Ends {
            timeout_secs: None,
            cancel_after_ms: None,
        },
    },
];

/// The group's cases (for `-s`).
pub fn names() -> Vec<&'static str> {
    CASES.iter().map(|c| c.name).collect()
}

/// The configured command tool of the `mcp_command_tool` case.
const COMMAND_TOOL: &str = r#"
[tools.shout]
description = "Upper-cases the text it is given"
input_schema = { type = "object", properties = { text = { type = "string" } } }
command = ["sh", "-c", "tr a-z A-Z"]
timeout_ms = 10000
"#;

const RUN_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs the group's selected cases × providers, the providers of a case side by side.
///
/// # Errors
/// When the example cannot be built or a fake model cannot start.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let selected: Vec<&Case> = CASES
        .iter()
        .filter(|c| ctx.scenarios.contains(&c.name))
        .collect();
    if selected.is_empty() {
        return Ok(Vec::new());
    }
    let (suite, providers) = (&ctx.suite, &ctx.providers);
    let example = build_example()?;
    let mut verdicts = Vec::new();
    for case in &selected {
        // One server per case: each provider's conversation gets the whole script.
        let scenario = suite.work.join(format!("{}.toml", case.name));
        std::fs::write(&scenario, scenario_toml(case))?;
        let log = suite.work.join(format!("{}.requests.jsonl", case.name));
        let server = ServerProcess::start(&suite.forge, &scenario.to_string_lossy(), &log)?;
        let selected: Vec<&'static str> = providers.to_vec();
        let jobs = selected.len();
        verdicts.extend(pool::run_all("mcp", selected, jobs, |provider| {
            Verdict::run(case.name, provider, |verdict| {
                let (seconds, problems) =
                    run_case(suite, &example, case, provider, &server.base_url)?;
                (verdict.seconds, verdict.failures) = (seconds, problems);
                Ok(())
            })
        }));
        drop(server);
    }
    Ok(verdicts)
}

fn scenario_toml(case: &Case) -> String {
    format!(
        "name = {name:?}\nprompts = [\"Use the forge tool as scripted.\"]\n\n\
         [[turns]]\ntext = \"Calling the tool.\"\ntool_calls = [{call}]\n\n\
         [[turns]]\ntext = \"Tool said: {{last_tool_output}}\"\n",
        name = case.name,
        call = case.call
    )
}

fn build_example() -> anyhow::Result<std::path::PathBuf> {
    let root = workspace_root();
    say("cargo build -p forge-cli --example rust_tools");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-p", "forge-cli", "--example", "rust_tools"])
        .current_dir(&root)
        .status()
        .context("running cargo build --example rust_tools")?;
    if !status.success() {
        bail!("building the rust_tools example failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("debug/examples/rust_tools"))
}

fn expect_for(case: &Case) -> Expect {
    Expect {
        scenario: case.name,
        ending: Ending::Success,
        text: case.text,
        tools: &[],
        files: &[],
        shell_fails: false,
        resume_text: None,
        timeout: RUN_TIMEOUT,
    }
}

/// Runs one case; returns its seconds and the problems found.
fn run_case(
    suite: &Suite,
    example: &Path,
    case: &Case,
    provider: &'static str,
    base_url: &str,
) -> anyhow::Result<(f64, Vec<String>)> {
    let expect = expect_for(case);
    if case.how == How::OwnHome {
        let started = Instant::now();
        let problems = super::mcp_own_home::run(
            suite,
            &expect,
            provider,
            base_url,
            "Use the forge tool as scripted.",
            COMMAND_TOOL,
            &|result, workspace| check(case, provider, result, workspace),
        )?;
        return Ok((started.elapsed().as_secs_f64(), problems));
    }
    let dir = prepare(suite, &expect, provider, base_url)?;
    let started = Instant::now();
    let mut problems = Vec::new();
    let (result, ports_left) = if case.how == How::Command {
        let toml = dir.workspace.join("forge.toml");
        let mut text = std::fs::read_to_string(&toml)?;
        text.push_str(COMMAND_TOOL);
        std::fs::write(&toml, text)?;
        let run = run_forge(
            suite,
            &dir,
            "Use the forge tool as scripted.",
            None,
            RUN_TIMEOUT,
        )?;
        let Some(result) = run.result else {
            bail!(
                "no JSON result (exit {:?}): {}",
                run.exit,
                tail(&run.stderr)
            );
        };
        (result, Vec::new())
    } else {
        let mut command = Command::new(example);
        command
            .args(["--provider", provider, "--workdir"])
            .arg(&dir.workspace);
        if let How::Ends {
            timeout_secs,
            cancel_after_ms,
        } = case.how
        {
            if let Some(secs) = timeout_secs {
                command.args(["--timeout-secs", &secs.to_string()]);
            }
            if let Some(ms) = cancel_after_ms {
                command.args(["--cancel-after-ms", &ms.to_string()]);
            }
        } else {
            command.args(["--timeout-secs", &RUN_TIMEOUT.as_secs().to_string()]);
        }
        command.arg("Use the forge tool as scripted.");
        super::isolate_env(&mut command, suite);
        command.envs(&dir.offline.process_env);
        let output = command.output().context("running the rust_tools example")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let report: Value = serde_json::from_str(stdout.trim()).with_context(|| {
            format!(
                "no report (exit {:?}): {}",
                output.status.code(),
                tail(&String::from_utf8_lossy(&output.stderr))
            )
        })?;
        if report["servers"].as_u64() != Some(1) {
            problems.push(format!(
                "expected one tool server, report says {}",
                report["servers"]
            ));
        }
        let left: Vec<String> = report["ports_left"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect();
        (report["result"].clone(), left)
    };
    if !ports_left.is_empty() {
        problems.push(format!("tool server still listening on {ports_left:?}"));
    }
    problems.extend(check(case, provider, &result, &dir.workspace));
    Ok((started.elapsed().as_secs_f64(), problems))
}

fn check(case: &Case, provider: &str, result: &Value, workspace: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let status = result["status"].as_str().unwrap_or("none");
    let content = result["content"].as_str().unwrap_or_default();
    let errors: Vec<&Value> = result["errors"].as_array().into_iter().flatten().collect();
    let error_kinds: Vec<&str> = errors.iter().filter_map(|e| e["kind"].as_str()).collect();
    let calls: Vec<&Value> = result["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let forge_calls: Vec<&&Value> = calls
        .iter()
        .filter(|c| c["kind"] == "mcp" && c["canonical_name"].is_string())
        .collect();
    if let How::Ends { .. } = case.how {
        // Only that it ended (not success) and left nothing behind (checked by the caller).
        if status == "success" {
            problems.push("the run was to be cut short but succeeded".into());
        }
        return problems;
    }
    if status != "success" {
        problems.push(format!(
            "status {status}, expected success (errors: {errors:?}, content {content:?})"
        ));
    }
    if let Some(text) = case.text {
        if !content.contains(text) {
            problems.push(format!("final text {content:?} lacks {text:?}"));
        }
    }
    if let Some(kind) = case.error_kind {
        if !error_kinds.contains(&kind) {
            problems.push(format!("errors {error_kinds:?} lack {kind:?}"));
        }
    }
    if let Some(text) = case.error_text {
        let in_errors = errors.iter().any(|e| e.to_string().contains(text));
        if !in_errors || !content.contains(text) {
            problems.push(format!(
                "{text:?} should be in the errors and reach the model (content {content:?})"
            ));
        }
    }
    match case.how {
        How::Unregistered => {
            // The CLI or forge refuses it; either way the call failed and no handler ran.
            // Codex refuses a function outside the namespace without reporting an item: the
            // refusal is what reaches the model.
            let refusal_echoed = [
                "unsupported call",
                "not found",
                "No such tool",
                "not registered",
            ]
            .iter()
            .any(|r| content.contains(r));
            let refused = calls.iter().any(|c| c["is_error"] == true) || refusal_echoed;
            if !refused {
                problems.push(format!("the unregistered call was not refused: {calls:?}"));
            }
            if error_kinds.iter().any(|k| *k != "tool_execution") {
                problems.push(format!("unexpected errors {error_kinds:?}"));
            }
        }
        _ => {
            let Some(call) = forge_calls.first() else {
                problems.push(format!("no canonical forge tool call among {calls:?}"));
                return problems;
            };
            let want_error = case.error_kind.is_some();
            if call["is_error"].as_bool() != Some(want_error) {
                problems.push(format!("tool call is_error should be {want_error}: {call}"));
            }
            if !call["duration_ms"].is_u64() {
                problems.push(format!(
                    "tool call has no duration (paired with forge's record?): {call}"
                ));
            }
        }
    }
    if case.name == "mcp_path_escape" && workspace.join("../escaped.txt").exists() {
        problems.push("the escaping write reached the disk".into());
    }
    let _ = provider;
    problems
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
