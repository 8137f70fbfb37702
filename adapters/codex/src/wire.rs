//! The `codex exec --json` stream, as far as forge reads it: one borrowed struct per line with
//! only the fields some event needs (serde skips the rest without allocating).
//!
//! Every line is `{"type": …}`: `thread.started`, `turn.started`, `turn.completed`,
//! `turn.failed`, `error`, and `item.started|updated|completed` carrying an `item` whose own
//! `type` says what it is (source: codex-rs/exec/src/exec_events.rs, fixtures of 0.169).

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::de::{Deserializer, Visitor};
use serde::{Deserialize, de};
use serde_json::value::RawValue;

/// A JSON string borrowed from the line when it has no escapes, owned otherwise. Serde's own
/// `Cow<str>` only borrows as a direct field, never inside an `Option`; this one always does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> Text<'a> {
    pub fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(TextVisitor)
    }
}

/// One stdout line.
#[derive(Debug, Deserialize)]
pub struct Line<'a> {
    /// `None` for the legacy `{"id","msg"}` protocol and other untyped objects.
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Text<'a>>,
    /// `thread.started`.
    #[serde(borrow, default)]
    pub thread_id: Option<Text<'a>>,
    /// `turn.completed`: the thread's cumulative total.
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// `turn.failed`.
    #[serde(borrow, default)]
    pub error: Option<Message<'a>>,
    /// Top-level `error`.
    #[serde(borrow, default)]
    pub message: Option<Text<'a>>,
    /// `item.*`.
    #[serde(borrow, default)]
    pub item: Option<Item<'a>>,
}

/// The kind of a line that starts `{"type":"<kind>"` (Codex serialises the tag first);
/// `None` for anything else, which takes the general path ([`Line`]).
pub fn leading_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    Some(&rest[..plain_string_end(rest)?])
}

/// The item type of an `item.*` line that starts
/// `{"type":"item.…","item":{"id":"<id>","type":"<item type>"` (Codex's field order).
pub fn leading_item_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    let rest = rest[plain_string_end(rest)?..].strip_prefix("\",\"item\":{\"id\":\"")?;
    let rest = rest[plain_string_end(rest)?..].strip_prefix("\",\"type\":\"")?;
    Some(&rest[..plain_string_end(rest)?])
}

/// Where the JSON string whose text starts `s` ends (its closing `"`); `None` when an
/// escape comes first (the plain search would be wrong) or there is no end. The strings
/// here (kinds, ids) are a few plain bytes.
fn plain_string_end(s: &str) -> Option<usize> {
    let end = memchr::memchr2(b'"', b'\\', s.as_bytes())?;
    (s.as_bytes().get(end) == Some(&b'"')).then_some(end)
}

// The fast path's line shapes, one per kind (and per item type for the common items): each
// holds only the fields its kind needs, so a line is read into a struct a fraction of
// [`Line`]'s size (moving `Line`, with an `Item` inside, cost more than reading most lines).
// Each also names `type`, unread (`_type`), so a repeated `type` key fails here as it does
// in `Line`.

/// `type`, present and unread.
type Tag = Option<de::IgnoredAny>;

/// `thread.started`.
#[derive(Debug, Deserialize)]
pub struct ThreadStarted<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub thread_id: Option<Text<'a>>,
}

/// `turn.completed`.
#[derive(Debug, Deserialize)]
pub struct TurnCompleted {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

/// `turn.failed`.
#[derive(Debug, Deserialize)]
pub struct TurnFailed<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub error: Option<Message<'a>>,
}

/// Top-level `error`.
#[derive(Debug, Deserialize)]
pub struct ErrorLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub message: Option<Text<'a>>,
}

/// `item.started|updated|completed`.
#[derive(Debug, Deserialize)]
pub struct ItemLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub item: Option<Item<'a>>,
}

/// Any object, read for its syntax only.
#[derive(Debug, Deserialize)]
pub struct Untyped {
    #[serde(rename = "type", default)]
    pub _type: Tag,
}

/// An `item.*` line whose item type the fast path read from the prefix.
#[derive(Debug, Deserialize)]
pub struct ItemOf<T> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(default = "none")]
    pub item: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

/// An `agent_message` or `reasoning` item.
#[derive(Debug, Deserialize)]
pub struct MessageItem<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    /// Read for its type (a string) only, as in [`Item`].
    #[serde(rename = "id", borrow, default)]
    pub _id: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub text: Option<Text<'a>>,
}

/// A `command_execution` item.
#[derive(Debug, Deserialize)]
pub struct CommandItem<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub id: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub command: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub aggregated_output: Option<Text<'a>>,
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(borrow, default)]
    pub status: Option<Text<'a>>,
}

/// A `file_change` item.
#[derive(Debug, Deserialize)]
pub struct FileChangeItem<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub id: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub changes: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub status: Option<Text<'a>>,
}

#[derive(Debug, Default, Deserialize, Clone, Copy, PartialEq, Eq)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub reasoning_output_tokens: u64,
}

#[derive(Debug, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default)]
    pub message: Option<Text<'a>>,
}

/// An item: the union of the fields of every item type forge reads.
#[derive(Debug, Deserialize)]
pub struct Item<'a> {
    /// `item_N`, a per-process counter: unique within one run only.
    #[serde(borrow, default)]
    pub id: Option<Text<'a>>,
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Text<'a>>,
    /// `agent_message`, `reasoning`.
    #[serde(borrow, default)]
    pub text: Option<Text<'a>>,
    /// `command_execution`.
    #[serde(borrow, default)]
    pub command: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub aggregated_output: Option<Text<'a>>,
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// `in_progress | completed | failed | declined`.
    #[serde(borrow, default)]
    pub status: Option<Text<'a>>,
    /// `file_change`: kept raw (it is the tool call's input), read again for file events.
    #[serde(borrow, default)]
    pub changes: Option<&'a RawValue>,
    /// `mcp_tool_call`.
    #[serde(borrow, default)]
    pub server: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub tool: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<Message<'a>>,
    /// `web_search`.
    #[serde(borrow, default)]
    pub query: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub action: Option<&'a RawValue>,
    /// `error` items (non-fatal warnings).
    #[serde(borrow, default)]
    pub message: Option<Text<'a>>,
}

/// One entry of `file_change.changes`. `kind` is kept raw so a future shape (an object with
/// `move_path`, say) degrades to an unknown change instead of failing the line.
#[derive(Debug, Deserialize)]
pub struct Change<'a> {
    #[serde(borrow)]
    pub path: Text<'a>,
    #[serde(borrow, default)]
    pub kind: Option<&'a RawValue>,
}

/// `mcp_tool_call.result`: `{content: [{type: "text", text}, …], structured_content}`.
#[derive(Debug, Deserialize)]
pub struct McpResult<'a> {
    #[serde(borrow, default)]
    pub content: Vec<McpContent<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct McpContent<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub text: Option<Text<'a>>,
}
