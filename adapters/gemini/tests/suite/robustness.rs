//! Odd input never panics and always yields the right events and errors.

use forge_domain::{AgentEvent, ExecutionStatus, FileChangeKind, ForgeError, ToolKind};

use super::support::{decode_lines, exit, kinds};

const INIT: &str = r#"{"type":"init","timestamp":"t","session_id":"s-1","model":"auto"}"#;

#[test]
fn truncated_json_is_unparsed_and_an_error() {
    let d = decode_lines(
        &format!("{INIT}\n{{\"type\":\"message\",\"role\":\"assis"),
        None,
    );
    assert_eq!(kinds(&d.events), ["session_started", "unparsed"]);
    assert!(matches!(
        d.errors.as_slice(),
        [ForgeError::Parsing { line: 2, .. }]
    ));
    assert_eq!(d.pieces.reported_success, None);
}

#[test]
fn non_json_text_and_log_tags_are_unparsed_without_error() {
    let d = decode_lines(
        "Warning: something\n[STARTUP] Phase x\n\n   \r\nYOLO mode",
        None,
    );
    assert_eq!(kinds(&d.events), ["unparsed", "unparsed", "unparsed"]);
    assert!(d.errors.is_empty());
}

#[test]
fn unknown_and_odd_shapes_are_kept_whole() {
    let stdout = [
        r#"{"type":"thought","text":"hmm"}"#,
        r#"{"no_type":true}"#,
        r#"[1,2]"#,
        r#"{"type":"message","role":"system","content":"x"}"#,
        r#"{"type":"init","session_id":"has space"}"#,
        // A known kind with a field of an unexpected type: format drift, reported.
        r#"{"type":"message","role":"assistant","content":42}"#,
    ]
    .join("\n");
    let d = decode_lines(&stdout, None);
    let unknown: Vec<&str> = d
        .events
        .iter()
        .map(|e| match e {
            AgentEvent::Unknown { kind, .. } => kind.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        unknown,
        ["thought", "untyped", "array", "message", "init", "message"]
    );
    assert!(matches!(
        d.errors.as_slice(),
        [ForgeError::Parsing { line: 6, .. }]
    ));
}

#[test]
fn a_huge_line_decodes() {
    let text = "x".repeat(20 * 1024 * 1024);
    let line =
        format!(r#"{{"type":"message","role":"assistant","content":"{text}","delta":true}}"#);
    let d = decode_lines(&line, None);
    assert!(
        matches!(&d.events[..], [AgentEvent::Text { text: t, delta: true }] if t.len() == text.len())
    );
    assert_eq!(d.pieces.content.len(), text.len());
}

#[test]
fn tool_results_pair_and_writes_change_files() {
    let stdout = [
        INIT,
        r#"{"type":"tool_use","tool_name":"replace","tool_id":"r1","parameters":{"file_path":"<WORKDIR>/src/a.rs","old_string":"a","new_string":"b"}}"#,
        r#"{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/elsewhere/b.txt","content":"x"}}"#,
        r#"{"type":"tool_result","tool_id":"r1","status":"success","output":"ok"}"#,
        r#"{"type":"tool_result","tool_id":"w1","status":"error","error":{"type":"permission","message":"denied"}}"#,
        r#"{"type":"tool_result","tool_id":"orphan","status":"success"}"#,
        r#"{"type":"message","role":"assistant","content":"Done","delta":true}"#,
    ]
    .join("\n");
    let d = decode_lines(&stdout, None);
    assert!(d.events.contains(&AgentEvent::FileChanged {
        path: "src/a.rs".into(),
        change: FileChangeKind::Modified
    }));
    assert_eq!(d.pieces.metadata.changed_files, vec!["src/a.rs".to_owned()]);
    let calls = &d.pieces.tool_calls;
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].kind, calls[0].is_error),
        (ToolKind::FileWrite, false)
    );
    assert_eq!(calls[1].output.as_deref(), Some("denied"));
    assert!(calls[1].is_error);
    assert_eq!(calls[2].kind, ToolKind::Other);
    assert_eq!(d.pieces.content, "Done");
}

#[test]
fn error_events_are_warnings_or_errors() {
    let stdout = [
        r#"{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}"#,
        r#"{"type":"error","severity":"error","message":"bad"}"#,
    ]
    .join("\n");
    let d = decode_lines(&stdout, None);
    assert_eq!(
        d.events,
        vec![
            AgentEvent::Warning {
                message: "Loop detected, stopping execution".into()
            },
            AgentEvent::Error {
                message: "bad".into(),
                code: Some("error".into())
            },
        ]
    );
}

/// Failures as 0.61.0 printed them (stdout and the relevant stderr), with their exit codes.
#[test]
fn failures_become_typed_errors_with_hints() {
    let api_401 = [
        INIT,
        r#"{"type":"message","role":"user","content":"hi\n"}"#,
        r#"{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":401,\"message\":\"boom\",\"status\":\"UNAUTHENTICATED\"}}]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{"gemini-fake":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0}}}}"#,
    ]
    .join("\n");
    let turn_limit = [
        INIT,
        r#"{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"out.txt","content":"hi\n"}}"#,
        r#"{"type":"tool_result","tool_id":"w1","status":"success"}"#,
        r#"{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json."},"stats":{"total_tokens":13,"input_tokens":10,"output_tokens":3,"cached":0,"input":10,"duration_ms":0,"tool_calls":1,"models":{"gemini-fake":{"total_tokens":13,"input_tokens":10,"output_tokens":3,"cached":0,"input":10}}}}"#,
    ]
    .join("\n");
    let cases: Vec<(&str, String, i32, &str)> = vec![
        (
            "api_401",
            api_401,
            145,
            "Error when talking to Gemini API\n",
        ),
        ("turn_limit", turn_limit, 53, "YOLO mode is enabled.\n"),
        (
            "untrusted",
            String::new(),
            55,
            "\u{1b}[31mGemini CLI is not running in a trusted directory. To proceed, either use --skip-trust, set the GEMINI_CLI_TRUST_WORKSPACE=true environment variable, or trust this directory.\u{1b}[0m\n",
        ),
        ("auth", String::new(), 41, "Invalid auth method selected.\n"),
        (
            "bad_resume",
            String::new(),
            42,
            "Error resuming session: Invalid session identifier \"nope\".\n",
        ),
        ("rate_limited_no_result", String::new(), 173, ""),
        (
            "signal_no_result",
            format!(
                "{INIT}\n{{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"par\",\"delta\":true}}"
            ),
            0,
            "",
        ),
    ];
    let mut seen = Vec::new();
    for (name, stdout, code, stderr) in cases {
        let d = decode_lines(&stdout, Some(&exit(code, stderr)));
        let completed = d.events.iter().find_map(|e| match e {
            AgentEvent::Completed {
                status,
                stop_reason,
                ..
            } => Some((*status, stop_reason.clone())),
            _ => None,
        });
        if let Some((status, _)) = &completed {
            assert_eq!(*status, ExecutionStatus::Error, "{name}");
        }
        seen.push(serde_json::json!({
            "case": name,
            "reported_success": d.pieces.reported_success,
            "stop_reason": d.pieces.metadata.stop_reason,
            "errors": d.pieces.errors,
        }));
    }
    insta::assert_yaml_snapshot!("failures", seen);
}

#[test]
fn finish_without_exit_reports_only_what_the_stream_said() {
    let d = decode_lines(INIT, None);
    assert_eq!(d.pieces.reported_success, None);
    assert!(d.pieces.errors.is_empty());
    assert_eq!(d.pieces.metadata.exit_code, None);
    assert_eq!(
        d.pieces.metadata.session_id.as_ref().map(|s| s.as_str()),
        Some("s-1")
    );
}

/// gemini prints `type` and `timestamp` first; the decoder reads that prefix by hand. Lines
/// with and without it, or with the keys in another order, decode alike.
#[test]
fn the_fixed_prefix_fast_path_agrees_with_the_parser() {
    let bodies = [
        r#""role":"assistant","content":"a \"quoted\" \u00e9 text","delta":true"#,
        r#""tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}"#,
        r#""tool_id":"t1","status":"error","error":{"type":"x","message":"no"}"#,
        r#""severity":"warning","message":"w""#,
        r#""status":"success","stats":{"input_tokens":5,"output_tokens":2,"cached":1,"duration_ms":9,"models":{"m":{"input_tokens":5,"output_tokens":2,"cached":1}}}"#,
    ];
    let types = ["message", "tool_use", "tool_result", "error", "result"];
    let fast: Vec<String> = types
        .iter()
        .zip(bodies)
        .map(|(k, b)| format!(r#"{{"type":"{k}","timestamp":"2026-11-21T23:41:30.563Z",{b}}}"#))
        .collect();
    let plain: Vec<String> = types
        .iter()
        .zip(bodies)
        .map(|(k, b)| format!(r#"{{{b},"type":"{k}"}}"#))
        .collect();
    let a = decode_lines(&fast.join("\n"), None);
    let b = decode_lines(&plain.join("\n"), None);
    assert_eq!(a.events, b.events);
    assert_eq!(
        kinds(&a.events),
        [
            "text",
            "tool_call_started",
            "tool_call_finished",
            "warning",
            "usage_update",
            "completed"
        ]
    );
    // Truncated after the prefix, and a duplicated `type`: the general path reports both.
    let d = decode_lines(
        "{\"type\":\"message\",\"timestamp\":\"t\",\"role\":\"assis\n{\"type\":\"message\",\"timestamp\":\"t\",\"type\":\"x\"}",
        None,
    );
    assert_eq!(kinds(&d.events), ["unparsed", "unknown"]);
    assert!(matches!(
        d.errors.as_slice(),
        [ForgeError::Parsing { line: 1, .. }]
    ));
}

/// Gemini 0.61.0 against a model answering HTTP 429 (`general.maxAttempts = 2`): the API
/// refused the session's only prompt, which gemini then took back out of its chat record.
const LIMITED_FIRST_PROMPT: [&str; 3] = [
    r#"{"type":"init","timestamp":"2026-11-25T12:06:16.459Z","session_id":"8403da84-52b2-4371-954a-a2af98aefc08","model":"auto"}"#,
    r#"{"type":"message","timestamp":"2026-11-25T12:06:16.464Z","role":"user","content":"Say hello."}"#,
    r#"{"type":"result","timestamp":"2026-11-25T12:06:23.021Z","status":"error","error":{"type":"unknown","message":"[API Error: rate limit reached, please try again in 3s]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method"},"stats":{"total_tokens":970,"input_tokens":953,"output_tokens":17,"cached":0,"input":953,"duration_ms":0,"tool_calls":0,"models":{"gemini-3.5-flash-lite":{"total_tokens":970,"input_tokens":953,"output_tokens":17,"cached":0,"input":953},"gemini-3.8-flash":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0}}}}"#,
];

/// A session is reported only when gemini keeps something to resume: not for a new session
/// whose only prompt the API refused (`--resume` would exit 42, "No previous sessions found").
#[test]
fn a_new_session_whose_only_prompt_failed_is_not_reported() {
    use forge_domain::SessionId;
    use forge_ports::Provider;

    let check = |stdout: &[&str], resuming: bool, expected: Option<&str>| {
        let mut request = super::support::request("Say hello.", "<WORKDIR>");
        if resuming {
            request.resume_session_id =
                Some(SessionId::new("8403da84-52b2-4371-954a-a2af98aefc08").unwrap());
        }
        let mut dec = super::support::provider().decoder(&request);
        let mut events = Vec::new();
        for (i, line) in stdout.iter().enumerate() {
            dec.decode_line(i as u64 + 1, line, &mut events).unwrap();
        }
        let pieces = dec.finish(Some(&exit(173, "")));
        let session = pieces
            .metadata
            .session_id
            .as_ref()
            .map(|s| s.as_str().to_owned());
        assert_eq!(
            session.as_deref(),
            expected,
            "{stdout:?} resuming {resuming}"
        );
        let noted = pieces
            .metadata
            .notes
            .iter()
            .any(|n| n.contains("nothing to resume"));
        assert_eq!(noted, expected.is_none(), "{:?}", pieces.metadata.notes);
    };
    let id = Some("8403da84-52b2-4371-954a-a2af98aefc08");
    check(&LIMITED_FIRST_PROMPT, false, None);
    // Look-alikes that keep their session: a resumed one, one with an answer or a tool call
    // before the failure, a successful one.
    check(&LIMITED_FIRST_PROMPT, true, id);
    let answered = [
        LIMITED_FIRST_PROMPT[0],
        LIMITED_FIRST_PROMPT[1],
        r#"{"type":"message","role":"assistant","content":"Hel","delta":true}"#,
        LIMITED_FIRST_PROMPT[2],
    ];
    check(&answered, false, id);
    let tool = [
        LIMITED_FIRST_PROMPT[0],
        r#"{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"out.txt","content":"hi\n"}}"#,
        r#"{"type":"tool_result","tool_id":"w1","status":"success"}"#,
        LIMITED_FIRST_PROMPT[2],
    ];
    check(&tool, false, id);
    let success = [
        LIMITED_FIRST_PROMPT[0],
        r#"{"type":"message","role":"assistant","content":"Hello","delta":true}"#,
        r#"{"type":"result","status":"success","stats":{"total_tokens":3,"input_tokens":2,"output_tokens":1,"cached":0,"input":2,"duration_ms":0,"tool_calls":0}}"#,
    ];
    check(&success, false, id);
}
