//! The fast path: Claude's hot lines (`assistant`, `user`, `stream_event`) read member by
//! member with the support crate's [`Cursor`], into the same wire structs the serde path
//! fills, so the decoder handles them with the same code.
//!
//! Claude's key order is not fixed (the `message` object is the model server's, passed
//! through), so members are matched by name in any order and the rest skipped, validated as
//! JSON. Whatever the lenient serde types would read differently is refused here (`None`)
//! and left to the serde path: a repeated field, an escaped key, a known field holding a
//! value of another type than expected (serde reads numbers there, where it may reject one
//! out of range).

use forge_adapter_support::layout::Cursor;

use crate::wire::lenient::{Bool, Obj, Str};
use crate::wire::{
    AssistantLine, Block, Content, Delta, Message, MessageField, StreamEvent, StreamLine,
    ToolUseResult, UserLine,
};

/// An `assistant` line, read whole.
pub(crate) fn assistant(line: &str) -> Option<AssistantLine<'_>> {
    let mut out = AssistantLine::default();
    let mut seen = Seen::default();
    let mut c = Cursor::new(line);
    c.object(|key, c| match key.plain()? {
        "type" => seen.first(0).and_then(|()| c.skip()),
        "message" => seen.put(1, &mut out.message, message_field(c)),
        "error" => seen.put(2, &mut out.error, str_field(c)),
        "api_error" => seen.put(3, &mut out.api_error, str_field(c)),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(out)
}

/// A `user` line, read whole.
pub(crate) fn user(line: &str) -> Option<UserLine<'_>> {
    let mut out = UserLine::default();
    let mut seen = Seen::default();
    let mut c = Cursor::new(line);
    c.object(|key, c| match key.plain()? {
        "type" => seen.first(0).and_then(|()| c.skip()),
        "message" => seen.put(1, &mut out.message, message_field(c)),
        "tool_use_result" => seen.put(2, &mut out.tool_use_result, obj(c, tool_use_result)),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(out)
}

/// A `stream_event` line, read whole.
pub(crate) fn stream_event(line: &str) -> Option<StreamLine<'_>> {
    let mut out = StreamLine::default();
    let mut seen = Seen::default();
    let mut c = Cursor::new(line);
    c.object(|key, c| match key.plain()? {
        "type" => seen.first(0).and_then(|()| c.skip()),
        "event" => seen.put(1, &mut out.event, obj(c, stream_event_body)),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(out)
}

/// Which known fields of one object were read: serde refuses a repeated one.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    /// `value` into `slot` the first time field `n` comes; `None` for a repeat, or when the
    /// value could not be read.
    fn put<T>(&mut self, n: u8, slot: &mut T, value: Option<T>) -> Option<()> {
        self.first(n)?;
        *slot = value?;
        Some(())
    }

    /// `Some` the first time field `n` comes.
    fn first(&mut self, n: u8) -> Option<()> {
        let bit = 1u16 << n;
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }
}

/// What the value at the cursor is, by its first byte.
fn peek(c: &Cursor<'_>) -> Option<u8> {
    c.rest().as_bytes().first().copied()
}

/// A value of a type the lenient field ignores, skipped as serde skips it (the field reads
/// as its default). Numbers are refused: serde reads those, and may reject one out of range.
fn ignored<T: Default>(c: &mut Cursor<'_>) -> Option<T> {
    match peek(c)? {
        b'-' | b'0'..=b'9' => None,
        _ => c.skip().map(|()| T::default()),
    }
}

/// A lenient string field: a string, else its default (none).
fn str_field<'a>(c: &mut Cursor<'a>) -> Option<Str<'a>> {
    match peek(c)? {
        b'"' => Some(Str(Some(c.string_text()?))),
        _ => ignored(c),
    }
}

/// A lenient boolean field.
fn bool_field(c: &mut Cursor<'_>) -> Option<Bool> {
    match peek(c)? {
        b't' | b'f' => c.bool().map(|b| Bool(Some(b))),
        _ => ignored(c),
    }
}

/// A lenient object field read by `read`.
fn obj<'a, T>(
    c: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> Option<T>,
) -> Option<Obj<T>> {
    match peek(c)? {
        b'{' => read(c).map(|t| Obj(Some(t))),
        _ => ignored(c),
    }
}

/// `message`: an object, a string, or `null`.
fn message_field<'a>(c: &mut Cursor<'a>) -> Option<MessageField<'a>> {
    match peek(c)? {
        b'{' => message(c).map(MessageField::Object),
        b'"' => Some(MessageField::Text(c.string_text()?)),
        _ => ignored(c),
    }
}

fn message<'a>(c: &mut Cursor<'a>) -> Option<Message<'a>> {
    let mut out = Message::default();
    let mut seen = Seen::default();
    c.object(|key, c| match key.plain()? {
        "model" => seen.put(0, &mut out.model, str_field(c)),
        "content" => seen.put(1, &mut out.content, content(c)),
        _ => c.skip(),
    })?;
    Some(out)
}

/// `content`: a string, an array of blocks, or `null`.
fn content<'a>(c: &mut Cursor<'a>) -> Option<Content<'a>> {
    match peek(c)? {
        b'"' => Some(Content::Text(c.string_text()?)),
        b'[' => {
            let mut blocks = Vec::new();
            c.array(|c| {
                // Elements that are not objects are dropped, as the serde path drops them.
                match peek(c)? {
                    b'{' => blocks.push(block(c)?),
                    _ => ignored::<()>(c)?,
                }
                Some(())
            })?;
            Some(Content::Blocks(blocks))
        }
        _ => ignored(c),
    }
}

fn block<'a>(c: &mut Cursor<'a>) -> Option<Block<'a>> {
    let mut out = Block::default();
    let mut seen = Seen::default();
    c.object(|key, c| match key.plain()? {
        "type" => seen.put(0, &mut out.kind, str_field(c)),
        "text" => seen.put(1, &mut out.text, str_field(c)),
        "thinking" => seen.put(2, &mut out.thinking, str_field(c)),
        "id" => seen.put(3, &mut out.id, str_field(c)),
        "name" => seen.put(4, &mut out.name, str_field(c)),
        "input" => seen.put(5, &mut out.input, c.raw_unless_null()),
        "tool_use_id" => seen.put(6, &mut out.tool_use_id, str_field(c)),
        "content" => seen.put(7, &mut out.content, content(c)),
        "is_error" => seen.put(8, &mut out.is_error, bool_field(c)),
        _ => c.skip(),
    })?;
    Some(out)
}

/// The value of the string field `field` of a tool's `input` object, walked by the cursor;
/// `Err` when the input is not a plain object of that shape (the caller asks serde).
pub(crate) fn input_string<'a>(
    input: &'a str,
    field: &str,
) -> Result<Option<std::borrow::Cow<'a, str>>, ()> {
    let mut found = None;
    let mut seen = false;
    let mut c = Cursor::new(input);
    c.object(|key, c| {
        if key.plain()? == field {
            if std::mem::replace(&mut seen, true) {
                return None;
            }
            found = str_field(c)?.0;
            Some(())
        } else {
            c.skip()
        }
    })
    .and_then(|()| c.end())
    .ok_or(())?;
    Ok(found)
}

fn tool_use_result<'a>(c: &mut Cursor<'a>) -> Option<ToolUseResult<'a>> {
    let mut out = ToolUseResult::default();
    let mut seen = Seen::default();
    c.object(|key, c| match key.plain()? {
        "type" => seen.put(0, &mut out.kind, str_field(c)),
        _ => c.skip(),
    })?;
    Some(out)
}

fn stream_event_body<'a>(c: &mut Cursor<'a>) -> Option<StreamEvent<'a>> {
    let mut out = StreamEvent::default();
    let mut seen = Seen::default();
    c.object(|key, c| match key.plain()? {
        "type" => seen.put(0, &mut out.kind, str_field(c)),
        "delta" => seen.put(1, &mut out.delta, obj(c, delta)),
        _ => c.skip(),
    })?;
    Some(out)
}

fn delta<'a>(c: &mut Cursor<'a>) -> Option<Delta<'a>> {
    let mut out = Delta::default();
    let mut seen = Seen::default();
    c.object(|key, c| match key.plain()? {
        "type" => seen.put(0, &mut out.kind, str_field(c)),
        "text" => seen.put(1, &mut out.text, str_field(c)),
        "thinking" => seen.put(2, &mut out.thinking, str_field(c)),
        _ => c.skip(),
    })?;
    Some(out)
}

/// The fast path against the serde path: every recorded line, and mutations of them,
/// decode to the same events, line shapes and result either way.
#[cfg(test)]
mod same_as_the_general_path {
    use forge_domain::{ExecutionRequest, PricingTable, ProviderId};
    use forge_testkit::props::{DecodedRun, decode_run, edits, fixture_runs, mutated_run};
    use proptest::prelude::*;

    use crate::decode::ClaudeDecoder;

    fn decode(lines: &[String], fast: bool) -> DecodedRun {
        let id = ProviderId::new("claude").expect("a valid id");
        let request = ExecutionRequest::new(id, "p", "<WORKDIR>");
        let mut decoder = ClaudeDecoder::new(&request, PricingTable::default());
        decoder.general_path_only = !fast;
        decode_run(&mut decoder, lines)
    }

    /// The recorded fixtures and the crate's extra transcripts, one run each.
    fn runs() -> Vec<Vec<String>> {
        let mut runs = fixture_runs("claude");
        let extra = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts/2.1.330");
        for entry in std::fs::read_dir(extra).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(entry.path()).expect("readable");
                runs.push(text.lines().map(str::to_owned).collect());
            }
        }
        runs.retain(|run| !run.is_empty());
        runs
    }

    #[test]
    fn every_recorded_run_decodes_alike() {
        let runs = runs();
        assert!(runs.len() > 5);
        for run in runs {
            assert_eq!(decode(&run, true), decode(&run, false), "{run:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn mutated_runs_decode_alike(pick in any::<prop::sample::Index>(), edits in edits()) {
            let run = mutated_run(&runs(), pick, &edits);
            prop_assert_eq!(decode(&run, true), decode(&run, false));
        }
    }
}
