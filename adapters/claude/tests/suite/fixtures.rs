//! Every recorded transcript, decoded as a live run would be: snapshot of events and result,
//! key facts asserted, and the offline (`decode_document`) path giving the same result.

use forge_domain::{AgentEvent, CostSource, ExecutionStatus, FileChangeKind, ForgeError, ToolKind};
use forge_testkit::fixtures::Transcript;

use super::support::{Decoded, all_transcripts, decode_document, decode_lines, exit_of, request};

fn check(t: &Transcript) -> Decoded {
    let mut req = request("recorded prompt");
    // A recorded resume is decoded as one: its result shows the session's totals apart.
    req.resume_session_id = t.resumed_session().map(|id| id.parse().unwrap());
    let exit = exit_of(t);
    let live = decode_lines(&req, &t.stdout, Some(&exit));
    let offline = decode_document(&req, &t.stdout, Some(&exit));
    assert_eq!(
        live, offline,
        "{}: offline decoding differs from the live path",
        t.scenario
    );
    insta::with_settings!({ snapshot_path => "snapshots/fixtures", prepend_module_to_snapshot => false }, {
        // Through a `Value`: insta cannot print raw JSON (`RawJson`) itself.
        insta::assert_yaml_snapshot!(format!("{}__{}", t.version, t.scenario), serde_json::to_value(live.view()).unwrap());
    });
    assert!(
        live.parse_errors.is_empty(),
        "{}: {:?}",
        t.scenario,
        live.parse_errors
    );
    live
}

fn error_hint(d: &Decoded) -> String {
    match d.pieces.errors.as_slice() {
        [ForgeError::ProviderExecution { hint, .. }] => hint.clone().unwrap_or_default(),
        other => panic!("expected one provider_execution error, got {other:?}"),
    }
}

fn tool_kinds(d: &Decoded) -> Vec<ToolKind> {
    d.pieces.tool_calls.iter().map(|c| c.kind).collect()
}

fn retries(d: &Decoded) -> Vec<(Option<u32>, Option<u16>, bool)> {
    d.events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retry {
                attempt,
                http_status,
                rate_limited,
                ..
            } => Some((*attempt, *http_status, *rate_limited)),
            _ => None,
        })
        .collect()
}

/// Facts each scenario must show, beyond the snapshot.
fn facts(scenario: &str, d: &Decoded) {
    use ExecutionStatus::*;
    let md = &d.pieces.metadata;
    match scenario {
        "hello" => {
            assert_eq!(d.status(), Success);
            assert_eq!(
                d.pieces.content,
                "Hello from the fake model! This is a plain final answer with no tool calls."
            );
            assert_eq!(
                md.session_id.as_ref().unwrap().as_str(),
                "26f2a26c-f664-4427-9d48-3abaafa27885"
            );
            assert_eq!(md.cli_version.as_deref(), Some("2.1.330"));
            assert_eq!(md.model.as_deref(), Some("claude-opus-5-5"));
            assert_eq!(md.usage.input_tokens, 12614);
            assert_eq!(md.usage.output_tokens, 18);
            assert_eq!(md.cost_source, Some(forge_domain::CostSource::Reported));
            assert_eq!(md.stop_reason.as_deref(), Some("end_turn"));
            assert!(d.pieces.tool_calls.is_empty());
        }
        "shell_fail" => {
            assert_eq!(d.status(), Success);
            assert_eq!(tool_kinds(d), [ToolKind::Shell]);
            let call = &d.pieces.tool_calls[0];
            assert!(call.is_error);
            assert_eq!(call.exit_code, Some(3));
            assert_eq!(md.num_turns, Some(2));
        }
        "write_file" => {
            assert_eq!(d.status(), Success);
            assert_eq!(tool_kinds(d), [ToolKind::FileWrite]);
            assert_eq!(md.changed_files, ["hello.txt"]);
            assert!(d.events.contains(&AgentEvent::FileChanged {
                path: "hello.txt".into(),
                change: FileChangeKind::Added
            }));
        }
        "edit_read_write_glob" => {
            assert_eq!(d.status(), Success);
            assert_eq!(
                tool_kinds(d),
                [
                    ToolKind::FileRead,
                    ToolKind::FileWrite,
                    ToolKind::FileWrite,
                    ToolKind::Search
                ]
            );
            assert_eq!(md.changed_files, ["notes.txt", "sub/added.txt"]);
            assert!(d.events.contains(&AgentEvent::FileChanged {
                path: "notes.txt".into(),
                change: FileChangeKind::Modified
            }));
            assert!(d.events.contains(&AgentEvent::FileChanged {
                path: "sub/added.txt".into(),
                change: FileChangeKind::Added
            }));
            // Glob is not offered in this build: the CLI answers with a failed tool result.
            let statuses: Vec<_> = d.pieces.tool_calls.iter().map(|c| c.status).collect();
            use forge_domain::ToolCallStatus::{Completed, Failed};
            assert_eq!(statuses, [Completed, Completed, Completed, Failed]);
        }
        "partial_messages_unicode" => {
            assert_eq!(d.status(), Success);
            assert_eq!(d.pieces.content, "Grüße aus 日本 🎉. Done.");
            // Deltas only: the repeated whole blocks are not counted a second time.
            let text: Vec<_> = d
                .events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::Text { text, delta } => Some((text.as_str(), *delta)),
                    _ => None,
                })
                .collect();
            assert_eq!(
                text,
                [
                    ("Grüße ", true),
                    ("aus ", true),
                    ("日本 🎉", true),
                    (". Done.", true)
                ]
            );
            let thinking: String = d
                .events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::Thinking { text, delta: true } => Some(text.as_str()),
                    AgentEvent::Thinking { delta: false, .. } => {
                        panic!("whole thinking block repeated")
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(thinking, "Let me think about ünïcödé.");
        }
        "max_turns" => {
            assert_eq!(d.status(), Error);
            assert_eq!(d.pieces.reported_success, Some(false));
            assert_eq!(md.stop_reason.as_deref(), Some("error_max_turns"));
            assert!(error_hint(d).contains("--max-turns"));
        }
        "rate_limit_then_success" => {
            assert_eq!(d.status(), Success);
            assert_eq!(
                retries(d),
                [(Some(1), Some(429), true), (Some(2), Some(429), true)]
            );
            assert_eq!(d.pieces.content, "Recovered after rate limits.");
        }
        "api_retry" => {
            assert_eq!(d.status(), Error);
            assert_eq!(retries(d), [(Some(1), None, false), (Some(2), None, false)]);
        }
        "permission_denied" => {
            assert_eq!(d.status(), Success);
            assert!(d.events.iter().any(|e| matches!(e, AgentEvent::Warning { message } if message.starts_with("permission denied for Bash"))));
            assert_eq!(d.pieces.tool_calls.len(), 1);
            assert!(d.pieces.tool_calls[0].is_error);
            assert!(
                md.notes.iter().any(|n| n == "permission denied for: Bash"),
                "{:?}",
                md.notes
            );
        }
        "auth_401" => {
            assert_eq!(d.status(), Error);
            assert_eq!(md.stop_reason.as_deref(), Some("api_error"));
            assert!(d.events.iter().any(|e| matches!(e, AgentEvent::Error { code: Some(c), .. } if c == "authentication_failed")));
            assert!(error_hint(d).contains("ANTHROPIC_API_KEY"));
        }
        "api_connection_refused" | "json_verbose_array" => {
            assert_eq!(d.status(), Error);
            assert_eq!(md.stop_reason.as_deref(), Some("api_error"));
            assert!(error_hint(d).contains("ANTHROPIC_BASE_URL"));
            assert!(md.session_id.is_some());
            assert_eq!(md.cli_version.as_deref(), Some("2.1.330"));
        }
        "json_single" => {
            // One result object: no init, the session id comes from the result.
            assert_eq!(d.status(), Error);
            assert!(md.session_id.is_some());
            assert_eq!(d.kinds(), ["completed"]);
        }
        "resume_unknown" => {
            assert_eq!(d.status(), Error);
            assert_eq!(md.stop_reason.as_deref(), Some("error_during_execution"));
            assert!(error_hint(d).contains("session was not found"));
        }
        "root_bypass" => {
            assert_eq!(d.status(), Error);
            assert_eq!(d.pieces.reported_success, None);
            assert!(d.events.is_empty());
            assert!(error_hint(d).contains("IS_SANDBOX=1"));
        }
        "sigint_abort" => {
            // SIGINT: claude reports an error result and exits 0.
            assert_eq!(d.status(), Error);
            assert_eq!(md.exit_code, Some(0));
            assert_eq!(md.stop_reason.as_deref(), Some("error_during_execution"));
            assert_eq!(d.pieces.content, "one two three four ");
        }
        "sigterm_kill" => {
            // SIGTERM: no result, exit 143: partial with what arrived.
            assert_eq!(d.status(), Partial);
            assert_eq!(d.pieces.reported_success, None);
            assert_eq!(md.exit_code, Some(143));
            assert!(md.session_id.is_some());
        }
        "partial_status" => {
            assert_eq!(d.status(), Error);
            assert!(
                d.events.iter().any(
                    |e| matches!(e, AgentEvent::Unknown { kind, .. } if kind == "system/status")
                )
            );
        }
        // Recorded through `forge-code-agent run` by `cargo xtask e2e --record`.
        "plain_answer" => {
            assert_eq!(d.status(), Success);
            assert_eq!(d.pieces.content, "Hello from the fake model.");
            assert!(d.pieces.tool_calls.is_empty());
        }
        "write_read_shell" => {
            assert_eq!(d.status(), Success);
            assert_eq!(
                tool_kinds(d),
                [ToolKind::FileWrite, ToolKind::FileRead, ToolKind::Shell]
            );
            assert!(
                d.pieces
                    .content
                    .ends_with("notes.txt has 2 lines: alpha and beta.")
            );
        }
        "five_tool_rounds" => {
            assert_eq!(d.status(), Success);
            use ToolKind::{FileRead, FileWrite, Shell};
            assert_eq!(
                tool_kinds(d),
                [FileWrite, Shell, FileRead, FileWrite, Shell]
            );
            assert!(d.pieces.content.ends_with("All five steps are done."));
        }
        "stream_cut" => {
            assert_eq!(d.status(), Success);
            assert!(d.pieces.content.ends_with("Hello after a cut stream."));
        }
        "resume" => {
            // The second run of the session: the model continued the conversation.
            assert_eq!(d.status(), Success);
            assert_eq!(d.pieces.content, "Resumed the session: the word was kiwi.");
        }
        "escapes_unicode" => {
            // Quotes, tabs, backslashes and non-ASCII text arrive unescaped.
            assert_eq!(d.status(), Success);
            assert_eq!(tool_kinds(d), [ToolKind::FileWrite, ToolKind::Shell]);
            assert!(d.pieces.content.ends_with(
                "Done: quotes.txt says \"hi\" with a path and 🚀; the count went to 300."
            ));
            let output = d.pieces.tool_calls[1].output.as_deref().unwrap_or("");
            assert!(
                output.starts_with("say \"hi\"\tthere\nC:\\path\\to\nnaïve café 日本語 🚀\n1\n"),
                "{output}"
            );
            assert!(output.ends_with("299\n300"), "{output}");
        }
        other => panic!("no facts for scenario {other}: add them"),
    }
}

#[test]
fn every_transcript_decodes_to_its_snapshot_and_facts() {
    let transcripts = all_transcripts();
    assert!(transcripts.len() >= 15, "{}", transcripts.len());
    for t in &transcripts {
        let decoded = check(t);
        facts(&t.scenario, &decoded);
    }
}

#[test]
fn offline_decoding_without_an_exit_reports_the_same_cli_verdict() {
    for t in all_transcripts() {
        let req = request("recorded prompt");
        let live = decode_lines(&req, &t.stdout, Some(&exit_of(&t)));
        let offline = decode_lines(&req, &t.stdout, None);
        assert_eq!(live.events, offline.events, "{}", t.scenario);
        assert_eq!(
            live.pieces.reported_success, offline.pieces.reported_success,
            "{}",
            t.scenario
        );
        assert_eq!(
            live.pieces.content, offline.pieces.content,
            "{}",
            t.scenario
        );
        assert_eq!(
            live.pieces.tool_calls, offline.pieces.tool_calls,
            "{}",
            t.scenario
        );
    }
}

/// On `--resume`, `total_cost_usd` and `modelUsage` are the session's running totals: the
/// result carries the run's own cost (the CLI's per-process figure, else the session's cost
/// per token applied to the run's `usage`), and the running totals apart.
#[test]
fn a_resumed_run_reports_its_own_cost_and_the_session_totals_apart() {
    let t = all_transcripts()
        .into_iter()
        .find(|t| t.scenario == "resume")
        .unwrap();
    let mut req = request("again");
    req.resume_session_id = Some(t.resumed_session().unwrap().parse().unwrap());
    // (transcript, run cost, source, session cost)
    let without_per_run_figure: String = t
        .stdout
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("model_usage_since_last_result");
            }
            format!("{v}\n")
        })
        .collect();
    for (stdout, cost, source) in [
        (t.stdout.clone(), 0.0505, CostSource::Reported),
        (without_per_run_figure, 0.0505, CostSource::Derived),
    ] {
        let d = decode_lines(&req, &stdout, Some(&exit_of(&t)));
        let m = &d.pieces.metadata;
        assert!((m.cost_usd.unwrap() - cost).abs() < 1e-9, "{m:?}");
        assert_eq!(m.cost_source, Some(source));
        assert_eq!((m.usage.input_tokens, m.usage.output_tokens), (12_575, 10));
        assert_eq!(m.session_cost_usd, Some(0.10072));
        let session = m.session_usage.unwrap();
        assert_eq!((session.input_tokens, session.output_tokens), (25_115, 13));
        let completed_cost = d.events.iter().find_map(|e| match e {
            AgentEvent::Completed { cost_usd, .. } => *cost_usd,
            _ => None,
        });
        assert_eq!(completed_cost, m.cost_usd);
    }
    // The same lines as a fresh run: no session figures.
    let fresh = decode_lines(&request("x"), &t.stdout, Some(&exit_of(&t)));
    assert_eq!(fresh.pieces.metadata.session_cost_usd, None);
    assert!(fresh.pieces.metadata.notes.is_empty());
}

#[test]
fn a_success_result_with_a_failing_exit_is_an_error() {
    let t = all_transcripts()
        .into_iter()
        .find(|t| t.scenario == "hello")
        .unwrap();
    let mut exit = exit_of(&t);
    exit.code = Some(1);
    exit.stderr_tail = "something broke\n".into();
    let d = decode_lines(&request("x"), &t.stdout, Some(&exit));
    assert_eq!(d.pieces.reported_success, Some(true));
    assert_eq!(d.status(), ExecutionStatus::Error);
    assert!(
        matches!(&d.pieces.errors[..], [ForgeError::ProviderExecution { exit_code: Some(1), stderr_summary, .. }] if stderr_summary == "something broke")
    );
}
