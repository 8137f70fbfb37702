//! Transcripts in the documented 0.163–0.169 shapes that the recorded fixtures do not cover
//! (retries, failures, MCP, web search, todo lists, reasoning, kills). One `check` per case:
//! a snapshot of events + pieces, plus the fact the case exists for.

use forge_adapter_codex::CodexProvider;
use forge_domain::{AgentEvent, ForgeError, ToolCallStatus, ToolKind, Usage};
use forge_domain::{RunId, SessionId};
use forge_ports::{InvocationContext, Provider};

use super::common::{Decoded, decode, decode_with, request, settings};

fn check(name: &str, stdout: &str, exit_code: Option<i32>, stderr: &str) -> Decoded {
    let d = decode(stdout, exit_code, stderr);
    insta::assert_yaml_snapshot!(format!("scenario__{name}"), d);
    d
}

const THREAD: &str =
    r#"{"type":"thread.started","thread_id":"01a20064-3c5d-7fa2-b816-fdfb79cb2bdf"}"#;

#[test]
fn retries_then_failure_is_an_error_with_a_hint() {
    let stdout = [
        THREAD,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"error","message":"Reconnecting... 1/2 (unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses)"}"#,
        r#"{"type":"error","message":"Reconnecting… 2/2 (unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses)"}"#,
        r#"{"type":"error","message":"unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses"}"#,
        r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: bad key"}}"#,
    ]
    .join("\n");
    let d = check(
        "retry_then_401",
        &stdout,
        Some(1),
        "Reading additional input from stdin...\n",
    );
    let retries: Vec<_> = d
        .events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Retry { .. }))
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(d.pieces.reported_success, Some(false));
    assert!(matches!(
        &d.pieces.errors[..],
        [ForgeError::ProviderExecution {
            exit_code: Some(1),
            hint: Some(_),
            ..
        }]
    ));
}

#[test]
fn a_retry_followed_by_success_is_success() {
    let stdout = [
        THREAD,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}"#,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"ok"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}"#,
    ]
    .join("\n");
    let d = check("retry_then_success", &stdout, Some(0), "");
    assert_eq!(d.pieces.reported_success, Some(true));
    assert!(d.pieces.errors.is_empty());
    assert_eq!(d.pieces.content, "ok");
}

#[test]
fn tools_of_every_kind_pair_by_item_id() {
    let stdout = [
        THREAD,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-fake` not found. Defaulting to fallback metadata; this can degrade performance."}}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"**Planning** the steps"}}"#,
        r#"{"type":"item.started","item":{"id":"item_2","type":"todo_list","items":[{"text":"look","completed":false}]}}"#,
        r#"{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[{"type":"text","text":"found it"}],"structured_content":null},"status":"completed"}}"#,
        r#"{"type":"item.started","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"fetch","arguments":{},"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"fetch","arguments":{},"error":{"message":"server gone"},"status":"failed"}}"#,
        r#"{"type":"item.started","item":{"id":"item_5","type":"web_search","query":"rust serde borrow"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_5","type":"web_search","query":"rust serde borrow"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_6","type":"file_change","changes":[{"path":"<WORKDIR>/src/a.rs","kind":"update"},{"path":"<WORKDIR>/old.txt","kind":"delete"},{"path":"/elsewhere/b.txt","kind":"add"}],"status":"completed"}}"#,
        r#"{"type":"item.started","item":{"id":"item_7","type":"command_execution","command":"/bin/bash -lc 'rm -rf /'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_7","type":"command_execution","command":"/bin/bash -lc 'rm -rf /'","aggregated_output":"","exit_code":null,"status":"declined"}}"#,
        r#"{"type":"item.updated","item":{"id":"item_2","type":"todo_list","items":[{"text":"look","completed":true}]}}"#,
        r#"{"type":"item.completed","item":{"id":"item_2","type":"todo_list","items":[{"text":"look","completed":true}]}}"#,
        r#"{"type":"item.completed","item":{"id":"item_8","type":"agent_message","text":"{\"answer\":42}"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"cache_write_input_tokens":5,"output_tokens":20,"reasoning_output_tokens":7}}"#,
    ]
    .join("\n");
    let d = check("every_tool_kind", &stdout, Some(0), "");
    let kinds: Vec<(ToolKind, ToolCallStatus)> = d
        .pieces
        .tool_calls
        .iter()
        .map(|c| (c.kind, c.status))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (ToolKind::Mcp, ToolCallStatus::Completed),
            (ToolKind::Mcp, ToolCallStatus::Failed),
            (ToolKind::Web, ToolCallStatus::Completed),
            (ToolKind::FileWrite, ToolCallStatus::Completed),
            (ToolKind::Shell, ToolCallStatus::Failed),
        ]
    );
    assert_eq!(d.pieces.tool_calls[0].output.as_deref(), Some("found it"));
    assert_eq!(
        d.pieces.metadata.changed_files,
        vec!["src/a.rs", "old.txt", "/elsewhere/b.txt"]
    );
    assert_eq!(
        d.pieces.metadata.usage,
        Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 40,
            cache_write_tokens: 5,
            reasoning_tokens: 7,
        }
    );
    // The model asked for in settings wins over the one Codex names in its notice.
    assert_eq!(d.pieces.metadata.model.as_deref(), Some("gpt-5.5"));
    assert!(d.pieces.metadata.cost_usd.is_some());
    let unknown = d
        .events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Unknown { kind, .. } if kind == "item/todo_list"))
        .count();
    assert_eq!(unknown, 3);
}

#[test]
fn killed_mid_turn_reports_nothing() {
    let stdout = [
        THREAD,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 100","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
    ]
    .join("\n");
    let d = check("killed_mid_turn", &stdout, Some(143), "");
    assert_eq!(d.pieces.reported_success, None);
    assert_eq!(d.pieces.tool_calls[0].status, ToolCallStatus::Pending);
    assert_eq!(d.pieces.metadata.usage, Usage::default());
}

#[test]
fn startup_failures_carry_stderr_and_a_hint() {
    let d = check(
        "not_a_repo",
        "",
        Some(1),
        "Reading additional input from stdin...\nNot inside a trusted directory and --skip-git-repo-check was not specified.\n",
    );
    match &d.pieces.errors[..] {
        [
            ForgeError::ProviderExecution {
                exit_code,
                stderr_summary,
                hint,
            },
        ] => {
            assert_eq!(*exit_code, Some(1));
            assert!(stderr_summary.starts_with("Not inside a trusted directory"));
            assert!(hint.is_some());
        }
        other => panic!("{other:?}"),
    }
    let d = decode("", Some(2), "");
    assert!(matches!(
        &d.pieces.errors[..],
        [ForgeError::ProviderExecution { stderr_summary, .. }] if stderr_summary == "codex exited with code 2"
    ));
}

fn resumed(thread: &str, cumulative: &str) -> String {
    [
        format!(r#"{{"type":"thread.started","thread_id":"{thread}"}}"#),
        r#"{"type":"turn.started"}"#.to_owned(),
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"again"}}"#
            .to_owned(),
        format!(r#"{{"type":"turn.completed","usage":{cumulative}}}"#),
    ]
    .join("\n")
}

#[test]
fn resumed_runs_report_their_own_share_of_the_thread() {
    let thread = "01a20064-3c5d-7fa2-b816-fdfb79cb2bdf";
    let provider = CodexProvider::new(settings());
    let mut req = request("again");
    req.resume_session_id = Some(SessionId::new(thread).unwrap());
    let stdout = resumed(
        thread,
        r#"{"input_tokens":63,"cached_input_tokens":10,"output_tokens":30}"#,
    );

    // Baseline known (passed through invocation → decoder).
    let ctx = InvocationContext {
        run_id: RunId::new("r1").unwrap(),
        run_dir: "/runs/r1".into(),
        home: None,
        in_repository: Some(true),
        resumed_usage: Some(Usage {
            input_tokens: 42,
            cache_read_tokens: 6,
            output_tokens: 18,
            ..Usage::default()
        }),
        mcp: None,
    };
    provider.invocation(&req, &ctx).unwrap();
    let d = decode_with(provider.decoder(&req), &stdout, None);
    assert_eq!(
        d.pieces.metadata.usage,
        Usage {
            input_tokens: 21,
            cache_read_tokens: 4,
            output_tokens: 12,
            ..Usage::default()
        }
    );
    assert!(d.pieces.metadata.notes[0].contains("run's own"));
    assert_eq!(d.pieces.metadata.session_usage.unwrap().input_tokens, 63);
    assert!(d.events.contains(&AgentEvent::UsageUpdate {
        usage: d.pieces.metadata.usage
    }));

    // Baseline consumed: the next decoder for that thread has none and says so; the running
    // total is never reported as the run's.
    let d = decode_with(provider.decoder(&req), &stdout, None);
    assert_eq!(d.pieces.metadata.usage, Usage::default());
    assert_eq!(d.pieces.metadata.cost_usd, None);
    assert_eq!(d.pieces.metadata.session_usage.unwrap().input_tokens, 63);
    assert!(d.pieces.metadata.notes[0].contains("not known"));
    assert!(
        !d.events
            .iter()
            .any(|e| matches!(e, AgentEvent::UsageUpdate { .. }))
    );

    // A fresh thread: no note, no session figures.
    let d = decode_with(provider.decoder(&request("x")), &stdout, None);
    assert!(d.pieces.metadata.notes.is_empty());
    assert_eq!(d.pieces.metadata.session_usage, None);
    assert_eq!(d.pieces.metadata.usage.input_tokens, 63);

    // The concrete decoder takes a baseline directly too.
    let dec = provider.codex_decoder(&req).with_resumed_usage(Some(Usage {
        input_tokens: 60,
        ..Usage::default()
    }));
    let d = decode_with(Box::new(dec), &stdout, None);
    assert_eq!(d.pieces.metadata.usage.input_tokens, 3);
}

/// A thread whose earlier turns forge never saw (started with the CLI itself): the total
/// before the run comes from the thread's rollout in the home the run uses.
#[test]
fn a_resumed_run_measures_from_the_threads_rollout() {
    let thread = "01a20064-3c5d-7fa2-b816-fdfb79cb2bdf";
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join(".codex/sessions/2026/11/25");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join(format!("rollout-2026-11-25T09-03-17-{thread}.jsonl")),
        r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":42,"cached_input_tokens":6,"output_tokens":18}}}}"#,
    )
    .unwrap();
    let provider = CodexProvider::new(settings());
    let mut req = request("again");
    req.resume_session_id = Some(SessionId::new(thread).unwrap());
    let ctx = InvocationContext {
        run_id: RunId::new("r1").unwrap(),
        run_dir: "/runs/r1".into(),
        home: Some(home.path().to_path_buf()),
        in_repository: Some(true),
        resumed_usage: None,
        mcp: None,
    };
    provider.invocation(&req, &ctx).unwrap();
    let stdout = resumed(
        thread,
        r#"{"input_tokens":63,"cached_input_tokens":10,"output_tokens":30}"#,
    );
    let d = decode_with(provider.decoder(&req), &stdout, None);
    let m = &d.pieces.metadata;
    assert_eq!(
        (
            m.usage.input_tokens,
            m.usage.cache_read_tokens,
            m.usage.output_tokens
        ),
        (21, 4, 12)
    );
    assert_eq!(m.session_usage.unwrap().input_tokens, 63);
}

#[test]
fn unknown_models_get_no_cost() {
    let mut s = settings();
    s.model = Some("mystery-model".into());
    let provider = CodexProvider::new(s);
    let stdout = resumed("t1", r#"{"input_tokens":63,"output_tokens":30}"#);
    let d = decode_with(
        provider.decoder(&request("x")),
        &stdout,
        Some(&forge_ports::ProcessExit::default()),
    );
    assert_eq!(d.pieces.metadata.model.as_deref(), Some("mystery-model"));
    assert_eq!(d.pieces.metadata.cost_usd, None);
    assert_eq!(d.pieces.metadata.cost_source, None);

    let provider = CodexProvider::new(settings());
    let d = decode_with(provider.decoder(&request("x")), &stdout, None);
    let cost = d.pieces.metadata.cost_usd.unwrap();
    assert!(
        (cost - (63.0 * 1.25 + 30.0 * 10.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(
        d.pieces.metadata.cost_source,
        Some(forge_domain::CostSource::Estimated)
    );
}

/// Observed with 0.169 and the model server's port closed: reconnect notices without a
/// count, forever, until forge's timeout kills it.
#[test]
fn an_unreachable_model_server_is_retries_then_a_kill() {
    let notice = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#;
    let stdout = [THREAD, r#"{"type":"turn.started"}"#, notice, notice].join("\n");
    let d = check("unreachable_server", &stdout, None, "");
    assert!(
        d.events
            .iter()
            .all(|e| !matches!(e, AgentEvent::Error { .. }))
    );
    assert!(matches!(
        d.events.last(),
        Some(AgentEvent::Retry {
            attempt: None,
            max_attempts: None,
            ..
        })
    ));
    assert_eq!(d.pieces.reported_success, None);
    assert!(d.pieces.errors.is_empty());
}

/// Codex 0.169.0, captured against the fake model failing the Responses stream three times
/// with `response.failed` / `rate_limit_exceeded` (`request_max_retries = 2`,
/// `stream_max_retries = 2`): its retries honour the "try again in" delay, then the turn
/// fails with the API's message, reset time included. (An HTTP 429 instead ends in
/// "exceeded retry limit, last status: 429" without the body.)
const RATE_LIMITED: [&str; 6] = [
    r#"{"type":"thread.started","thread_id":"01a21292-a4af-76f2-887a-e39aba2539ff"}"#,
    r#"{"type":"turn.started"}"#,
    r#"{"type":"error","message":"Reconnecting... 1/2 (rate limit exceeded: Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 3s.)"}"#,
    r#"{"type":"error","message":"Reconnecting... 2/2 (rate limit exceeded: Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 3s.)"}"#,
    r#"{"type":"error","message":"rate limit exceeded: Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 3s."}"#,
    r#"{"type":"turn.failed","error":{"message":"rate limit exceeded: Rate limit reached for gpt-5.5 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 3s."}}"#,
];

#[test]
fn a_rate_limit_that_outlasts_the_retries_fails_with_its_reset_time() {
    use forge_domain::rate_limit::rate_limit_of;
    use forge_domain::{ExecutionResult, ExecutionStatus, ProviderId};

    let d = check(
        "rate_limit_exceeded",
        &RATE_LIMITED.join("\n"),
        Some(1),
        "Reading additional input from stdin...\n",
    );
    let retries: Vec<_> = d
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retry {
                attempt,
                rate_limited,
                ..
            } => Some((*attempt, *rate_limited)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(Some(1), true), (Some(2), true)]);
    assert_eq!(d.pieces.reported_success, Some(false));

    // What `on_rate_limit = "wait"` reads: the reset, 3 s from when the run ended.
    const NOW: u64 = 1_800_000_000_000;
    let mut result =
        ExecutionResult::empty(ProviderId::new("codex").unwrap(), ExecutionStatus::Error);
    result.errors = d.pieces.errors.clone();
    let limit = rate_limit_of(&result, NOW).expect("a rate limit with its reset");
    assert_eq!(limit.resets_at_ms, NOW + 3_000);
    assert!(
        limit.message.contains("Rate limit reached for gpt-5.5"),
        "{}",
        limit.message
    );
}
