//! `-o json`: the pretty single object on stdout, and the error object on stderr.

use forge_domain::{AgentEvent, ExecutionStatus, ForgeError};

use super::support::{decode_document, decode_lines, exit, kinds};

/// Verbatim stdout of `gemini -p "" -o json -m gemini-fake` (0.61.0) against a fake model.
const SUCCESS: &str = r#"{
  "session_id": "92e13aaf-8396-4e82-b300-54f9ffc034e9",
  "response": "Hello from fake.",
  "stats": {
    "models": {
      "gemini-fake": {
        "api": {
          "totalRequests": 1,
          "totalErrors": 0,
          "totalLatencyMs": 37,
          "errorsByType": {}
        },
        "tokens": {
          "input": 10,
          "prompt": 10,
          "candidates": 3,
          "total": 13,
          "cached": 0,
          "thoughts": 0,
          "tool": 0
        },
        "roles": {
          "main": {
            "totalRequests": 1,
            "totalErrors": 0,
            "totalLatencyMs": 37,
            "tokens": {"input": 10, "prompt": 10, "candidates": 3, "total": 13, "cached": 0, "thoughts": 0, "tool": 0}
          }
        }
      }
    },
    "tools": {
      "totalCalls": 0,
      "totalSuccess": 0,
      "totalFail": 0,
      "totalDurationMs": 0,
      "totalDecisions": {"accept": 0, "reject": 0, "modify": 0, "auto_accept": 0},
      "byName": {}
    },
    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0}
  }
}"#;

/// Verbatim stderr tail of the same command when the model answered HTTP 401 (exit 145).
const STDERR_401: &str = "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
Ripgrep is not available. Falling back to GrepTool.
Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T00-06-27-374Z.json _ApiError: {\"error\":{\"code\":401,\"message\":\"boom\",\"status\":\"UNAUTHENTICATED\"}}
    at throwErrorIfNotOK (file:///x/bundle/chunk-JDPZ4CE3.js:267833:24)
    at async Turn.run (file:///x/bundle/chunk-JDPZ4CE3.js:333001:24) {
  status: 401
}
{
  \"session_id\": \"89e1717e-c8f1-44ca-bb1f-2574e110efed\",
  \"error\": {
    \"type\": \"Error\",
    \"message\": \"{\\\"error\\\":{\\\"code\\\":401,\\\"message\\\":\\\"boom\\\",\\\"status\\\":\\\"UNAUTHENTICATED\\\"}}\",
    \"code\": 401
  }
}
";

#[test]
fn the_json_object_decodes_into_text_and_completion() {
    let d = decode_document(SUCCESS, Some(&exit(0, "")));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(
        kinds(&d.events),
        ["session_started", "text", "usage_update", "completed"]
    );
    let AgentEvent::Completed {
        status,
        usage,
        duration_ms,
        result_text,
        ..
    } = &d.events[3]
    else {
        panic!("no completion");
    };
    assert_eq!(*status, ExecutionStatus::Success);
    assert_eq!(usage.unwrap().input_tokens, 10);
    assert_eq!(usage.unwrap().output_tokens, 3);
    assert_eq!(*duration_ms, Some(37));
    assert_eq!(result_text.as_deref(), Some("Hello from fake."));
    assert_eq!(d.pieces.content, "Hello from fake.");
    assert_eq!(d.pieces.reported_success, Some(true));
    assert_eq!(
        d.pieces.metadata.session_id.as_ref().map(|s| s.as_str()),
        Some("92e13aaf-8396-4e82-b300-54f9ffc034e9")
    );
    assert_eq!(d.pieces.metadata.model.as_deref(), Some("gemini-fake"));
}

#[test]
fn a_json_error_object_is_a_reported_failure() {
    let doc = r#"{"session_id":"s-1","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns","code":53}}"#;
    let d = decode_document(doc, Some(&exit(53, "")));
    assert_eq!(kinds(&d.events), ["session_started", "error", "completed"]);
    assert_eq!(d.pieces.reported_success, Some(false));
    let [
        ForgeError::ProviderExecution {
            exit_code,
            stderr_summary,
            hint,
        },
    ] = d.pieces.errors.as_slice()
    else {
        panic!("{:?}", d.pieces.errors);
    };
    assert_eq!(*exit_code, Some(53));
    assert_eq!(stderr_summary, "Reached max session turns");
    assert!(hint.as_deref().unwrap().contains("max turns"));
}

#[test]
fn an_empty_stdout_with_the_error_on_stderr_is_decoded_in_finish() {
    let d = decode_lines("", Some(&exit(145, STDERR_401)));
    assert!(d.events.is_empty());
    assert_eq!(d.pieces.reported_success, None);
    assert_eq!(
        d.pieces.metadata.session_id.as_ref().map(|s| s.as_str()),
        Some("89e1717e-c8f1-44ca-bb1f-2574e110efed")
    );
    insta::assert_yaml_snapshot!("stderr_401_errors", d.pieces.errors);
}

#[test]
fn a_one_event_stream_is_not_mistaken_for_a_document() {
    let line = r#"{"type":"init","session_id":"s-1","model":"auto"}"#;
    let d = decode_document(line, None);
    assert_eq!(kinds(&d.events), ["session_started"]);
    assert_eq!(d.pieces.reported_success, None);
}
