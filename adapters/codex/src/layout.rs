//! The fast path: Codex's hot lines read by their layout, in one validating pass.
//!
//! `codex exec --json` serialises each event with serde, so keys come in the order of the
//! structs in codex-rs/exec/src/exec_events.rs (checked against the 0.169 fixtures):
//!
//! ```text
//! {"type":"thread.started","thread_id":"…"}
//! {"type":"turn.started"}
//! {"type":"turn.completed","usage":{…}}
//! {"type":"error","message":"…"}
//! {"type":"item.<phase>","item":{"id":"…","type":"agent_message|reasoning","text":"…"}}
//! {"type":"item.<phase>","item":{"id":"…","type":"command_execution","command":"…",
//!     "aggregated_output":"…","exit_code":0|null,"status":"…"}}
//! {"type":"item.<phase>","item":{"id":"…","type":"file_change","changes":[…],"status":"…"}}
//! ```
//!
//! A line is read whole before anything is emitted; any other shape (a new field, another
//! order, another kind) is `None` and takes the general path in `decode.rs`.

use forge_adapter_support::layout::{Cursor, JsonStr};

use crate::wire::{Text, WireUsage};

/// One hot line, read.
pub(crate) enum Hot<'a> {
    ThreadStarted {
        thread_id: Text<'a>,
    },
    TurnStarted,
    TurnCompleted {
        usage: WireUsage,
    },
    /// A top-level `error`: a reconnect notice or a failure.
    Error {
        message: Text<'a>,
    },
    Item {
        phase: &'a str,
        item: HotItem<'a>,
    },
}

/// The item of an `item.*` line.
pub(crate) enum HotItem<'a> {
    /// `agent_message` or `reasoning`.
    Message { kind: &'a str, text: Text<'a> },
    Command {
        id: Text<'a>,
        command: JsonStr<'a>,
        output: Text<'a>,
        exit_code: Option<i64>,
        status: Text<'a>,
    },
    FileChange {
        id: Text<'a>,
        /// The `changes` array as JSON text, walked (see [`walk_changes`]).
        changes: &'a str,
        status: Text<'a>,
    },
}

/// `line` as one of the hot shapes, if it is exactly one.
pub(crate) fn read(line: &str) -> Option<Hot<'_>> {
    let mut c = Cursor::new(line);
    c.expect(br#"{"type":""#)?;
    // Kinds and item types are matched as literal text with what follows them: cheaper than
    // reading a string and then comparing it.
    let hot = if let Some(phase) = item_phase(&mut c) {
        c.expect(br#","item":"#)?;
        Hot::Item {
            phase,
            item: read_item(&mut c)?,
        }
    } else if c.accept(br#"turn.started""#) {
        Hot::TurnStarted
    } else if c.accept(br#"thread.started","thread_id":"#) {
        Hot::ThreadStarted {
            thread_id: text(&mut c)?,
        }
    } else if c.accept(br#"error","message":"#) {
        Hot::Error {
            message: text(&mut c)?,
        }
    } else if c.accept(br#"turn.completed","usage":"#) {
        Hot::TurnCompleted {
            usage: usage(&mut c)?,
        }
    } else {
        return None;
    };
    c.expect(b"}")?;
    c.end()?;
    Some(hot)
}

/// The phase of an `item.*` line (`item.completed"` and the others, quote included).
fn item_phase(c: &mut Cursor<'_>) -> Option<&'static str> {
    if c.accept(br#"item.completed""#) {
        Some("item.completed")
    } else if c.accept(br#"item.started""#) {
        Some("item.started")
    } else if c.accept(br#"item.updated""#) {
        Some("item.updated")
    } else {
        None
    }
}

fn read_item<'a>(c: &mut Cursor<'a>) -> Option<HotItem<'a>> {
    c.expect(br#"{"id":"#)?;
    let id = text(c)?;
    c.expect(br#","type":""#)?;
    let item = if c.accept(br#"command_execution","command":"#) {
        let command = c.string()?;
        c.expect(br#","aggregated_output":"#)?;
        let output = text(c)?;
        c.expect(br#","exit_code":"#)?;
        let exit_code = c.int_or_null()?;
        c.expect(br#","status":"#)?;
        HotItem::Command {
            id,
            command,
            output,
            exit_code,
            status: text(c)?,
        }
    } else if c.accept(br#"agent_message","text":"#) {
        HotItem::Message {
            kind: "agent_message",
            text: text(c)?,
        }
    } else if c.accept(br#"reasoning","text":"#) {
        HotItem::Message {
            kind: "reasoning",
            text: text(c)?,
        }
    } else if c.accept(br#"file_change","changes":"#) {
        let mark = c.mark();
        changes(c, |_, _| {})?;
        let changes = c.since(mark);
        c.expect(br#","status":"#)?;
        HotItem::FileChange {
            id,
            changes,
            status: text(c)?,
        }
    } else {
        return None;
    };
    c.expect(b"}")?;
    Some(item)
}

/// `{"input_tokens":…,"cached_input_tokens":…,"cache_write_input_tokens":…,
/// "output_tokens":…,"reasoning_output_tokens":…}` (0.169's usage; older ones lack a key and
/// take the general path).
fn usage(c: &mut Cursor<'_>) -> Option<WireUsage> {
    c.expect(br#"{"input_tokens":"#)?;
    let input_tokens = c.uint()?;
    c.expect(br#","cached_input_tokens":"#)?;
    let cached_input_tokens = c.uint()?;
    c.expect(br#","cache_write_input_tokens":"#)?;
    let cache_write_input_tokens = c.uint()?;
    c.expect(br#","output_tokens":"#)?;
    let output_tokens = c.uint()?;
    c.expect(br#","reasoning_output_tokens":"#)?;
    let reasoning_output_tokens = c.uint()?;
    c.expect(b"}")?;
    Some(WireUsage {
        input_tokens,
        cached_input_tokens,
        cache_write_input_tokens,
        output_tokens,
        reasoning_output_tokens,
    })
}

/// `[{"path":"…","kind":"add|update|delete"},…]`: each change's path and kind (as JSON
/// text) to `each`. The cursor ends after the array.
fn changes<'a>(c: &mut Cursor<'a>, mut each: impl FnMut(Text<'a>, Option<&'a str>)) -> Option<()> {
    c.expect(b"[")?;
    if c.accept(b"]") {
        return Some(());
    }
    loop {
        c.expect(br#"{"path":"#)?;
        let path = text(c)?;
        c.expect(br#","kind":"#)?;
        let kind = c.string()?.literal();
        c.expect(b"}")?;
        each(path, Some(kind));
        if c.accept(b"]") {
            return Some(());
        }
        c.expect(b",")?;
    }
}

/// Walks a `changes` array of Codex's layout; `None` (and maybe some calls made) when it
/// has another shape.
pub(crate) fn walk_changes<'a>(
    json: &'a str,
    each: impl FnMut(Text<'a>, Option<&'a str>),
) -> Option<()> {
    let mut c = Cursor::new(json);
    changes(&mut c, each)?;
    c.end()
}

/// A string value, decoded.
fn text<'a>(c: &mut Cursor<'a>) -> Option<Text<'a>> {
    c.string_text().map(Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_hot_lines_are_read_by_layout() {
        let lines = [
            r#"{"type":"thread.started","thread_id":"01a200b8-deea-76f1-a177-282e29415e3b"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Step 1."}}"#,
            r#"{"type":"item.started","item":{"id":"item_1","type":"file_change","changes":[{"path":"/w/a.txt","kind":"add"}],"status":"in_progress"}}"#,
            r#"{"type":"item.started","item":{"id":"item_3","type":"command_execution","command":"/bin/bash -lc 'echo two > step2.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_5","type":"command_execution","command":"/bin/bash -lc \"cat 'step1.txt'\"","aggregated_output":"one\n","exit_code":0,"status":"completed"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":59936,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":66,"reasoning_output_tokens":0}}"#,
        ];
        for line in lines {
            assert!(read(line).is_some(), "{line}");
        }
    }

    #[test]
    fn other_shapes_take_the_general_path() {
        let lines = [
            // A field Codex may add one day, another key order, whitespace, other kinds.
            r#"{"type":"turn.started","extra":1}"#,
            r#"{"thread_id":"t","type":"thread.started"}"#,
            r#"{"type": "turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"i","type":"todo_list","items":[]}}"#,
            r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"a"}}x"#,
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
    use forge_domain::{ExecutionRequest, ProviderId};
    use forge_ports::ProviderSettings;
    use forge_testkit::props::{DecodedRun, decode_run, edits, fixture_runs, mutated_run};
    use proptest::prelude::*;

    use crate::decode::CodexDecoder;

    fn decode(lines: &[String], fast: bool) -> DecodedRun {
        let id = ProviderId::new("codex").expect("a valid id");
        let request = ExecutionRequest::new(id, "p", "<WORKDIR>");
        let mut decoder = CodexDecoder::new(&request, &ProviderSettings::default());
        decoder.general_path_only = !fast;
        decode_run(&mut decoder, lines)
    }

    #[test]
    fn every_recorded_run_decodes_alike() {
        let runs = fixture_runs("codex");
        assert!(!runs.is_empty());
        for run in runs {
            assert_eq!(decode(&run, true), decode(&run, false), "{run:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn mutated_runs_decode_alike(pick in any::<prop::sample::Index>(), edits in edits()) {
            let run = mutated_run(&fixture_runs("codex"), pick, &edits);
            prop_assert_eq!(decode(&run, true), decode(&run, false));
        }
    }
}
