//! Every recorded gemini transcript decodes into the expected events and result.

use forge_domain::{ToolCallStatus, ToolKind};
use forge_testkit::fixtures::{Transcript, transcripts};

use super::support::{Decoded, decode_document, decode_lines, exit, pieces_view, view};

fn check(t: &Transcript) -> Decoded {
    let code = t.exit_code().expect("fixture records its exit code");
    let live = decode_lines(&t.stdout, Some(&exit(code, &t.stderr)));
    // `events --file T` (whole document, offline, recorded exit code) gives the same result.
    let offline = decode_document(&t.stdout, Some(&exit(code, &t.stderr)));
    assert_eq!(live.events, offline.events, "{}", t.scenario);
    assert_eq!(
        pieces_view(&live.pieces),
        pieces_view(&offline.pieces),
        "{}",
        t.scenario
    );
    assert!(live.errors.is_empty(), "{}: {:?}", t.scenario, live.errors);
    insta::assert_yaml_snapshot!(format!("{}__{}", t.version, t.scenario), view(&live));
    live
}

#[test]
fn every_fixture_decodes() {
    let all = transcripts("gemini");
    assert!(all.len() >= 3, "fixtures missing: {}", all.len());
    for t in &all {
        let d = check(t);
        let p = &d.pieces;
        assert_eq!(p.reported_success, Some(true), "{}", t.scenario);
        assert!(p.errors.is_empty(), "{}: {:?}", t.scenario, p.errors);
        assert!(!p.content.is_empty(), "{}", t.scenario);
        assert!(p.metadata.session_id.is_some(), "{}", t.scenario);
        assert!(p.metadata.usage.input_tokens > 0, "{}", t.scenario);
        assert!(p.metadata.cost_usd.is_some(), "{}", t.scenario);
        assert!(
            p.tool_calls
                .iter()
                .all(|c| c.status != ToolCallStatus::Pending),
            "{}",
            t.scenario
        );
        match t.scenario.as_str() {
            "hello" => {
                assert_eq!(
                    p.content,
                    "Hello from the fake model! This is a plain final answer with no tool calls."
                );
                assert!(p.tool_calls.is_empty());
            }
            "write_file" => {
                assert_eq!(p.content, "Created hello.txt with the content 'hi'.");
                assert_eq!(p.tool_calls[0].kind, ToolKind::FileWrite);
                assert_eq!(p.metadata.changed_files, vec!["hello.txt".to_owned()]);
            }
            "shell_fail" => {
                assert_eq!(p.tool_calls[0].kind, ToolKind::Shell);
                assert!(p.content.starts_with("The command failed with exit code 3"));
            }
            "escapes_unicode" => {
                // Quotes, tabs, backslashes and non-ASCII text arrive unescaped.
                assert_eq!(
                    p.content,
                    "Done: quotes.txt says \"hi\" with a path and 🚀; the count went to 300."
                );
                assert_eq!(p.metadata.changed_files, vec!["quotes.txt".to_owned()]);
                let input = p.tool_calls[0].input.to_value();
                assert_eq!(
                    input["content"],
                    "say \"hi\"\tthere\nC:\\path\\to\nnaïve café 日本語 🚀\n"
                );
                let output = p.tool_calls[1].output.as_deref().unwrap_or("");
                assert!(output.starts_with("say \"hi\"\tthere\n"), "{output}");
                assert!(output.ends_with("299\n300"), "{output}");
            }
            _ => {}
        }
    }
}
