//! Assertions on one run's `ExecutionResult` (as printed by `run --json`), its workspace
//! and its artifact bundle. Each failed check is one readable line.

use std::path::Path;

use serde_json::Value;

use super::case_run::Run;
use super::cases::{Ending, Expect};

/// The files every run bundle holds.
pub const BUNDLE_FILES: [&str; 6] = [
    "events.jsonl",
    "request.json",
    "result.json",
    "run.json",
    "stderr.log",
    "stdout.log",
];

/// Checks `run` against `expect` for `provider`; `text` is the final text expected.
pub fn run(
    expect: &Expect,
    provider: &str,
    run: &Run,
    text: Option<&str>,
    workspace: &Path,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(what);
    let Some(result) = &run.result else {
        fail(format!(
            "no JSON result on stdout (exit {:?}); stderr: {}",
            run.exit,
            tail(&run.stderr)
        ));
        return failures;
    };
    let status = result["status"].as_str().unwrap_or("?");
    let errors = result["errors"].as_array().map_or(0, Vec::len);
    match expect.ending {
        Ending::Success => {
            if status != "success" || run.exit != Some(0) {
                fail(format!(
                    "status {status} exit {:?}, expected success: errors {}",
                    run.exit, result["errors"]
                ));
            }
            if result
                .pointer("/metadata/session_id")
                .is_none_or(Value::is_null)
            {
                fail("no session id".into());
            }
            let usage = &result["metadata"]["usage"];
            let tokens = usage["input_tokens"].as_u64().unwrap_or(0)
                + usage["output_tokens"].as_u64().unwrap_or(0);
            if tokens == 0 {
                fail(format!("no usage reported: {usage}"));
            }
        }
        Ending::ClearError => {
            let timed_out = run.exit == Some(124) && has_error_kind(result, "provider_timeout");
            let errored = status == "error" && run.exit == Some(1);
            if !(timed_out || errored) || errors == 0 {
                fail(format!(
                    "status {status} exit {:?}: expected a clear error (status error, or a \
                     forge timeout with provider_timeout); errors {}",
                    run.exit, result["errors"]
                ));
            }
        }
    }
    let content = result["content"].as_str().unwrap_or_default();
    if let Some(text) = text.filter(|t| !content.contains(t)) {
        fail(format!("final text {content:?} lacks {text:?}"));
    }
    check_tools(expect, provider, result, &mut fail);
    for (path, expected) in expect.files {
        match std::fs::read_to_string(workspace.join(path)) {
            Ok(found) if found == *expected => {}
            Ok(found) => fail(format!("{path} holds {found:?}, expected {expected:?}")),
            Err(e) => fail(format!("{path} not written: {e}")),
        }
    }
    check_bundle(result, workspace, &mut fail);
    failures
}

fn check_tools(expect: &Expect, provider: &str, result: &Value, fail: &mut impl FnMut(String)) {
    let calls = result["tool_calls"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = calls.iter().filter_map(|c| c["kind"].as_str()).collect();
    let expected: Vec<&str> = expect.tools.iter().map(|a| a.kind(provider)).collect();
    if kinds != expected {
        fail(format!("tool kinds {kinds:?}, expected {expected:?}"));
    }
    if expect.shell_fails {
        // gemini reports a failed command as a successful tool with no exit code.
        let reported = provider != "gemini";
        let failed = calls.iter().any(|c| {
            c["kind"] == "shell" && (c["is_error"] == true || c["exit_code"].as_i64() == Some(3))
        });
        if reported && !failed {
            fail(format!(
                "the failing shell call is not reported failed: {calls:?}"
            ));
        }
    }
}

fn check_bundle(result: &Value, workspace: &Path, fail: &mut impl FnMut(String)) {
    let Some(run_id) = result.pointer("/metadata/run_id").and_then(Value::as_str) else {
        fail("no run id".into());
        return;
    };
    let dir = workspace.join(".forgecode/runs").join(run_id);
    let missing: Vec<&str> = BUNDLE_FILES
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        fail(format!("bundle {} lacks {missing:?}", dir.display()));
    }
}

fn has_error_kind(result: &Value, kind: &str) -> bool {
    result["errors"]
        .as_array()
        .is_some_and(|errors| errors.iter().any(|e| e["kind"] == kind))
}

fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(600);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
