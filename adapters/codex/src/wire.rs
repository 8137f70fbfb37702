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

impl WireUsage {
    pub fn to_usage(self) -> forge_domain::Usage {
        forge_domain::Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cached_input_tokens,
            cache_write_tokens: self.cache_write_input_tokens,
            reasoning_tokens: self.reasoning_output_tokens,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default)]
    pub message: Option<Text<'a>>,
}

/// A text that can be huge (an answer), read from its literal (see
/// [`forge_adapter_support::json_string::deserialize_text`]).
fn literal_text<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Text<'a>>, D::Error> {
    forge_adapter_support::json_string::deserialize_text(d).map(|text| text.map(Text))
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
    #[serde(borrow, default, deserialize_with = "literal_text")]
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
