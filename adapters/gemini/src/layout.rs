//! The fast path: gemini's hot lines read by their layout, in one validating pass.
//!
//! `gemini -o stream-json` writes each event with `JSON.stringify`, so keys come in the
//! order the CLI builds its objects (packages/core/src/output/stream-json-formatter.ts,
//! checked against the 0.61 fixtures), `type` and `timestamp` first:
//!
//! ```text
//! {"type":"init","timestamp":"…","session_id":"…","model":"…"}
//! {"type":"message","timestamp":"…","role":"…","content":"…"[,"delta":true|false]}
//! {"type":"tool_use","timestamp":"…","tool_name":"…","tool_id":"…","parameters":{…}}
//! {"type":"tool_result","timestamp":"…","tool_id":"…","status":"…"[,"output":"…"]}
//! ```
//!
//! A line is read whole before anything is emitted; any other shape (an `error` object, a
//! new field, another order, `result` and `error` events) is `None` and takes the serde
//! path in `decode.rs`.

use forge_adapter_support::layout::Cursor;

use crate::wire::{InitEvent, MessageEvent, Str, ToolResultEvent, ToolUseEvent};

/// One hot line, read into the same views the serde path fills.
pub(crate) enum Hot<'a> {
    Init(InitEvent<'a>),
    Message(MessageEvent<'a>),
    ToolUse(ToolUseEvent<'a>),
    ToolResult(ToolResultEvent<'a>),
}

/// `line` as one of the hot shapes, if it is exactly one.
pub(crate) fn read(line: &str) -> Option<Hot<'_>> {
    let mut c = Cursor::new(line);
    c.expect(br#"{"type":""#)?;
    // The kind is matched as literal text: cheaper than reading a string and comparing it.
    let kind = if c.accept(br#"message","timestamp":"#) {
        Kind::Message
    } else if c.accept(br#"tool_use","timestamp":"#) {
        Kind::ToolUse
    } else if c.accept(br#"tool_result","timestamp":"#) {
        Kind::ToolResult
    } else if c.accept(br#"init","timestamp":"#) {
        Kind::Init
    } else {
        return None;
    };
    c.string()?;
    let hot = match kind {
        Kind::Init => {
            c.expect(br#","session_id":"#)?;
            let session_id = Some(text(&mut c)?);
            c.expect(br#","model":"#)?;
            Hot::Init(InitEvent {
                kind: None,
                session_id,
                model: Some(text(&mut c)?),
            })
        }
        Kind::Message => {
            c.expect(br#","role":"#)?;
            let role = Some(text(&mut c)?);
            c.expect(br#","content":"#)?;
            let content = Some(text(&mut c)?);
            let delta = if c.accept(br#","delta":"#) {
                Some(c.bool()?)
            } else {
                None
            };
            Hot::Message(MessageEvent {
                kind: None,
                role,
                content,
                delta,
            })
        }
        Kind::ToolUse => {
            c.expect(br#","tool_name":"#)?;
            let tool_name = Some(text(&mut c)?);
            c.expect(br#","tool_id":"#)?;
            let tool_id = Some(text(&mut c)?);
            c.expect(br#","parameters":"#)?;
            Hot::ToolUse(ToolUseEvent {
                kind: None,
                tool_name,
                tool_id,
                parameters: c.raw_unless_null()?,
            })
        }
        Kind::ToolResult => {
            c.expect(br#","tool_id":"#)?;
            let tool_id = Some(text(&mut c)?);
            c.expect(br#","status":"#)?;
            let status = Some(text(&mut c)?);
            let output = if c.accept(br#","output":"#) {
                Some(text(&mut c)?)
            } else {
                None
            };
            Hot::ToolResult(ToolResultEvent {
                kind: None,
                tool_id,
                status,
                output,
                error: None,
            })
        }
    };
    c.expect(b"}")?;
    c.end()?;
    Some(hot)
}

/// The kinds read by layout.
enum Kind {
    Init,
    Message,
    ToolUse,
    ToolResult,
}

/// A string value, decoded.
fn text<'a>(c: &mut Cursor<'a>) -> Option<Str<'a>> {
    c.string_text().map(Str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_hot_lines_are_read_by_layout() {
        let lines = [
            r#"{"type":"init","timestamp":"2026-11-22T00:46:59.845Z","session_id":"3f27ace6-4b61-43e4-945a-7f3035cfe6fe","model":"auto"}"#,
            r#"{"type":"message","timestamp":"2026-11-22T00:46:59.847Z","role":"user","content":"Write notes.txt, read it back."}"#,
            r#"{"type":"message","timestamp":"2026-11-22T00:46:59.911Z","role":"assistant","content":"Writing notes.txt.","delta":true}"#,
            r#"{"type":"tool_use","timestamp":"2026-11-22T00:46:59.980Z","tool_name":"write_file","tool_id":"write_file_0","parameters":{"content":"alpha\nbeta\n","file_path":"/w/notes.txt"}}"#,
            r#"{"type":"tool_result","timestamp":"2026-11-22T00:47:00.052Z","tool_id":"write_file_0","status":"success"}"#,
            r#"{"type":"tool_result","timestamp":"2026-11-22T00:47:00.139Z","tool_id":"run_0","status":"success","output":"2 notes.txt"}"#,
        ];
        for line in lines {
            assert!(read(line).is_some(), "{line}");
        }
    }

    #[test]
    fn other_shapes_take_the_general_path() {
        let lines = [
            r#"{"type":"result","timestamp":"t","status":"success","stats":{}}"#,
            r#"{"type":"tool_result","timestamp":"t","tool_id":"x","status":"error","output":"o","error":{"type":"e","message":"m"}}"#,
            r#"{"timestamp":"t","type":"init","session_id":"s","model":"m"}"#,
            r#"{"type":"message","timestamp":"t","role":"assistant","content":"a","delta":1}"#,
            r#"{"type":"message","timestamp":"t","role":"assistant","content":"a"} x"#,
        ];
        for line in lines {
            assert!(read(line).is_none(), "{line}");
        }
    }
}

/// The fast path against the general one: every recorded line, and mutations of them,
/// decode to the same events, line shapes and result either way.
#[cfg(test)]
mod same_as_the_general_path {
    use forge_testkit::props::{DecodedRun, decode_run, edits, fixture_runs, mutated_run};
    use proptest::prelude::*;

    use crate::decode::{DecoderConfig, GeminiDecoder};

    fn decode(lines: &[String], fast: bool) -> DecodedRun {
        let mut decoder = GeminiDecoder::new(DecoderConfig {
            workdir: "<WORKDIR>".into(),
            ..DecoderConfig::default()
        });
        decoder.general_path_only = !fast;
        decode_run(&mut decoder, lines)
    }

    #[test]
    fn every_recorded_run_decodes_alike() {
        let runs = fixture_runs("gemini");
        assert!(!runs.is_empty());
        for run in runs {
            assert_eq!(decode(&run, true), decode(&run, false), "{run:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn mutated_runs_decode_alike(pick in any::<prop::sample::Index>(), edits in edits()) {
            let run = mutated_run(&fixture_runs("gemini"), pick, &edits);
            prop_assert_eq!(decode(&run, true), decode(&run, false));
        }
    }
}
