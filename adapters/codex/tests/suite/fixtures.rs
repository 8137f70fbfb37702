//! Every recorded transcript of the real codex, decoded and snapshotted, with key facts
//! asserted. A new recording under testkit/fixtures/codex/<version>/ is a new case here.

use forge_adapter_codex::CodexProvider;
use forge_domain::{AgentEvent, ToolKind};
use forge_ports::{ProcessExit, Provider};
use forge_testkit::fixtures::{Transcript, transcripts};

use super::common::{Decoded, PiecesView, decode_with, request, settings};

fn live_exit(t: &Transcript) -> ProcessExit {
    ProcessExit {
        code: t.exit_code(),
        stderr_tail: t.stderr.clone(),
        stderr_bytes: t.stderr.len() as u64,
        ..ProcessExit::default()
    }
}

fn check(t: &Transcript) -> Decoded {
    let provider = CodexProvider::new(settings());
    let decoded = decode_with(
        provider.decoder(&request(t.meta["prompt"].as_str().unwrap_or("p"))),
        &t.stdout,
        Some(&live_exit(t)),
    );
    assert!(
        decoded.parse_errors.is_empty(),
        "{}: {:?}",
        t.scenario,
        decoded.parse_errors
    );
    insta::assert_yaml_snapshot!(format!("fixture__{}__{}", t.version, t.scenario), decoded);
    decoded
}

#[test]
fn every_fixture_decodes_to_its_snapshot() {
    let all = transcripts("codex");
    assert!(all.len() >= 3, "fixtures missing: {}", all.len());
    for t in &all {
        let d = check(t);
        let p = &d.pieces;
        // Facts every recording shares: a thread id, a turn end, content, usage.
        assert!(p.metadata.session_id.is_some(), "{}", t.scenario);
        assert_eq!(p.reported_success, Some(true), "{}", t.scenario);
        assert!(!p.content.is_empty(), "{}", t.scenario);
        assert!(p.metadata.usage.input_tokens > 0, "{}", t.scenario);
        assert!(p.errors.is_empty(), "{}: {:?}", t.scenario, p.errors);
        match t.scenario.as_str() {
            "hello" => {
                assert!(p.content.starts_with("Hello from the fake model!"));
                assert!(p.tool_calls.is_empty());
            }
            "shell_fail" => {
                let call = &p.tool_calls[0];
                assert_eq!(call.kind, ToolKind::Shell);
                assert_eq!(call.exit_code, Some(3));
                assert!(call.is_error);
                assert!(call.output.as_deref().unwrap_or("").contains("boom"));
            }
            "write_file" => {
                assert_eq!(p.tool_calls[0].kind, ToolKind::FileWrite);
                assert_eq!(p.metadata.changed_files, vec!["hello.txt".to_owned()]);
                assert_eq!(p.content, "Created hello.txt with the content 'hi'.");
            }
            "escapes_unicode" => {
                // Quotes, tabs, backslashes and non-ASCII text arrive unescaped.
                assert_eq!(
                    p.content,
                    "Done: quotes.txt says \"hi\" with a path and 🚀; the count went to 300."
                );
                assert_eq!(p.metadata.changed_files, vec!["quotes.txt".to_owned()]);
                let shell = &p.tool_calls[1];
                assert_eq!(shell.kind, ToolKind::Shell);
                let output = shell.output.as_deref().unwrap_or("");
                assert!(
                    output
                        .starts_with("say \"hi\"\tthere\nC:\\path\\to\nnaïve café 日本語 🚀\n1\n")
                );
                assert!(output.ends_with("\n299\n300\n"), "{output}");
            }
            _ => {}
        }
    }
}

/// The `events` command decodes a recording with `decode_document` and the recorded exit
/// code: it must give what the live run gave.
#[test]
fn a_recording_decodes_like_the_live_run() {
    for t in transcripts("codex") {
        let provider = CodexProvider::new(settings());
        let req = request("p");
        let live = decode_with(provider.decoder(&req), &t.stdout, Some(&live_exit(&t)));

        let mut offline = provider.decoder(&req);
        let mut events = Vec::new();
        let errors = offline.decode_document(&t.stdout, &mut events);
        assert!(errors.is_empty());
        let exit = ProcessExit {
            code: t.exit_code(),
            ..ProcessExit::default()
        };
        let pieces: PiecesView = offline.finish(Some(&exit)).into();
        assert_eq!(events, live.events, "{}", t.scenario);
        assert_eq!(pieces, live.pieces, "{}", t.scenario);

        // Without any exit at all, only the exit code is missing.
        let mut bare = provider.decoder(&req);
        bare.decode_document(&t.stdout, &mut Vec::new());
        let mut bare: PiecesView = bare.finish(None).into();
        bare.metadata.exit_code = t.exit_code();
        assert_eq!(bare, live.pieces, "{}", t.scenario);
    }
}

#[test]
fn the_stdin_notice_on_stderr_is_not_an_error() {
    // Recordings with the prompt in argv and stdin left a pipe carry the notice; forge
    // passes the prompt on stdin (`-`), so its recordings do not.
    let noted: Vec<_> = transcripts("codex")
        .into_iter()
        .filter(|t| t.stderr.contains("Reading additional input from stdin"))
        .collect();
    assert!(!noted.is_empty(), "no recording with the stdin notice left");
    for t in noted {
        let provider = CodexProvider::new(settings());
        let d = decode_with(
            provider.decoder(&request("p")),
            &t.stdout,
            Some(&live_exit(&t)),
        );
        assert!(d.pieces.errors.is_empty());
        assert!(
            d.events
                .iter()
                .all(|e| !matches!(e, AgentEvent::Error { .. }))
        );
    }
}

/// The recorded `exec resume` stream decoded as a resume: with the thread's total before the
/// run (as its rollout gives it: the first run's 9 569 in / 3 out in a recording of the same
/// scenario) the run's own usage and estimated cost, and the thread's running total apart;
/// without it, no usage is passed off as the run's.
#[test]
fn a_recorded_resume_shows_the_runs_figures_and_the_thread_total_apart() {
    let t = transcripts("codex")
        .into_iter()
        .find(|t| t.scenario == "resume")
        .unwrap();
    let provider = CodexProvider::new(settings());
    let mut req = request(t.meta["prompt"].as_str().unwrap_or("p"));
    req.resume_session_id = Some(t.resumed_session().unwrap().parse().unwrap());
    let before = forge_domain::Usage {
        input_tokens: 9_569,
        output_tokens: 3,
        ..forge_domain::Usage::default()
    };
    let known = decode_with(
        Box::new(
            provider
                .codex_decoder(&req)
                .with_resumed_usage(Some(before)),
        ),
        &t.stdout,
        Some(&live_exit(&t)),
    );
    let unknown = decode_with(provider.decoder(&req), &t.stdout, Some(&live_exit(&t)));
    insta::assert_yaml_snapshot!("resumed__known_total_before", known);
    insta::assert_yaml_snapshot!("resumed__unknown_total_before", unknown);
}
