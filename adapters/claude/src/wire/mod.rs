//! The Claude Code stream-json wire format, as far as forge reads it.
//!
//! One struct per top-level message kind. The CLI prints `"type"` first in every kind but
//! `result` (late there), so the kind is read off the line's start ([`leading_type`]) and
//! the line parsed once into its kind's struct; a line without that prefix is read as a
//! [`ResultLine`] (one pass for results) and re-read only if it is another kind. Fields are
//! borrowed from the line and lenient (see [`lenient`]); everything not named here is
//! skipped by serde without being built.

pub mod lenient;
pub mod model_usage;

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess};
use serde_json::value::RawValue;

use lenient::{Bool, F64, Leaf, List, Obj, Str, U64, deserialize_leaf};

/// Where a line's kind is: `{"type":"<kind>"` at the start (every kind but `result`, as the
/// CLI prints them), else `None` and the line is read as a [`ResultLine`] first.
pub fn leading_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    // Kinds are a few plain bytes; an escape would make the `"` search wrong.
    let end = rest.bytes().position(|b| b == b'"' || b == b'\\')?;
    (rest.as_bytes()[end] == b'"').then(|| &rest[..end])
}

// One struct per line kind, each with only its kind's fields: a line is read into a struct
// a fraction of the size of one covering every kind, with a few names to match each key
// against instead of thirty. Defaults are per field, not `#[serde(default)]` on the struct:
// that form builds (and drops) a whole default value for every line parsed. `_type` names
// `type` unread, so a repeated `type` key fails the line as it always did.

/// `type`, present and unread.
type Tag = Option<serde::de::IgnoredAny>;

/// `system`: `init`, `api_retry`, `permission_denied`, and subtypes kept raw.
#[derive(Debug, Default, Deserialize)]
pub struct SystemLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub subtype: Str<'a>,
    #[serde(borrow, default)]
    pub session_id: Str<'a>,

    // init
    #[serde(borrow, default)]
    pub model: Str<'a>,
    #[serde(borrow, default)]
    pub cwd: Str<'a>,
    #[serde(borrow, default)]
    pub claude_code_version: Str<'a>,
    #[serde(borrow, default)]
    pub tools: List<Str<'a>>,

    // api_retry
    #[serde(default)]
    pub attempt: U64,
    #[serde(default)]
    pub max_retries: U64,
    #[serde(default)]
    pub retry_delay_ms: U64,
    #[serde(default)]
    pub error_status: U64,
    /// The error category.
    #[serde(borrow, default)]
    pub error: Str<'a>,

    // permission_denied (`message` is a string there)
    #[serde(borrow, default)]
    pub tool_name: Str<'a>,
    #[serde(borrow, default)]
    pub decision_reason: Str<'a>,
    #[serde(borrow, default)]
    pub message: MessageField<'a>,
}

/// `assistant`: a model message (text, thinking, tool_use blocks), or a synthetic API error.
#[derive(Debug, Default, Deserialize)]
pub struct AssistantLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub message: MessageField<'a>,
    /// The synthetic message's error category.
    #[serde(borrow, default)]
    pub error: Str<'a>,
    /// `connection_failed`, …
    #[serde(borrow, default)]
    pub api_error: Str<'a>,
}

/// `user`: tool results (or the echoed prompt).
#[derive(Debug, Default, Deserialize)]
pub struct UserLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub message: MessageField<'a>,
    #[serde(borrow, default)]
    pub tool_use_result: Obj<ToolUseResult<'a>>,
}

/// `stream_event`: a raw Anthropic stream event (partial messages on).
#[derive(Debug, Default, Deserialize)]
pub struct StreamLine<'a> {
    #[serde(rename = "type", default)]
    pub _type: Tag,
    #[serde(borrow, default)]
    pub event: Obj<StreamEvent<'a>>,
}

/// A line of a kind forge does not read: its syntax only (and a repeated `type`).
#[derive(Debug, Default, Deserialize)]
pub struct TypeOnly {
    #[serde(rename = "type", default)]
    pub _type: Tag,
}

/// `result`, which prints `type` late; also the first read of any line whose `type` is not
/// at the start (its `kind` says what it is).
#[derive(Debug, Default, Deserialize)]
pub struct ResultLine<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Str<'a>,
    #[serde(borrow, default)]
    pub subtype: Str<'a>,
    #[serde(borrow, default)]
    pub session_id: Str<'a>,
    #[serde(default)]
    pub is_error: Bool,
    #[serde(borrow, default)]
    pub result: Str<'a>,
    #[serde(borrow, default)]
    pub errors: List<Str<'a>>,
    /// The session's running cost on `--resume` (earlier runs included).
    #[serde(default)]
    pub total_cost_usd: F64,
    /// This run's main-loop usage, also on `--resume`.
    #[serde(default)]
    pub usage: Obj<WireUsage>,
    /// Per model, the session's running totals on `--resume`.
    #[serde(rename = "modelUsage", default)]
    pub model_usage: model_usage::PerModelTotals,
    /// Per model, this process's own figures (2.1.x).
    #[serde(default)]
    pub model_usage_since_last_result: model_usage::PerModelTotals,
    #[serde(default)]
    pub num_turns: U64,
    #[serde(default)]
    pub duration_ms: U64,
    #[serde(borrow, default)]
    pub stop_reason: Str<'a>,
    #[serde(borrow, default)]
    pub terminal_reason: Str<'a>,
    #[serde(default)]
    pub api_error_status: U64,
    /// `connection_failed`, …
    #[serde(borrow, default)]
    pub api_error: Str<'a>,
    #[serde(borrow, default)]
    pub permission_denials: List<Obj<Denial<'a>>>,
}

/// `message`: an Anthropic message object, or (permission_denied) a plain string.
#[derive(Debug, Default)]
pub enum MessageField<'a> {
    #[default]
    Absent,
    Object(Message<'a>),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> Leaf<'de> for MessageField<'a> {
    fn from_str(v: Cow<'de, str>) -> Self {
        MessageField::Text(v)
    }
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let obj: Obj<Message<'a>> = Leaf::from_map(map)?;
        Ok(obj.0.map_or(MessageField::Absent, MessageField::Object))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MessageField<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_leaf(d)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    #[serde(borrow)]
    pub model: Str<'a>,
    #[serde(borrow)]
    pub content: Content<'a>,
}

/// Message or tool-result content: a plain string or a list of blocks.
#[derive(Debug, Default)]
pub enum Content<'a> {
    #[default]
    Absent,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Leaf<'de> for Content<'a> {
    fn from_str(v: Cow<'de, str>) -> Self {
        Content::Text(v)
    }
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        let list: List<Obj<Block<'a>>> = Leaf::from_seq(seq)?;
        Ok(Content::Blocks(
            list.0.into_iter().filter_map(|b| b.0).collect(),
        ))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_leaf(d)
    }
}

impl Content<'_> {
    /// The text of the content: the string itself, or the text blocks joined by newlines.
    /// [`Content::joined_text`] as shared text: one copy when there is one piece of text.
    pub fn shared_text(&self) -> Option<Arc<str>> {
        match self {
            Content::Absent => None,
            Content::Text(t) => Some(Arc::from(t.as_ref())),
            Content::Blocks(blocks) => {
                let mut texts = blocks.iter().filter_map(|b| b.text.as_deref());
                match (texts.next(), texts.next()) {
                    (None, _) => Some(Arc::from("")),
                    (Some(only), None) => Some(Arc::from(only)),
                    _ => self.joined_text().map(Arc::from),
                }
            }
        }
    }

    pub fn joined_text(&self) -> Option<String> {
        match self {
            Content::Absent => None,
            Content::Text(t) => Some(t.clone().into_owned()),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for text in blocks.iter().filter_map(|b| b.text.as_deref()) {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(text);
                }
                Some(out)
            }
        }
    }
}

/// A content block: text, thinking, tool_use, tool_result (fields of all kinds, flat).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow, deserialize_with = "text_literal")]
    pub text: Str<'a>,
    #[serde(borrow)]
    pub thinking: Str<'a>,
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Tool input, kept as the CLI's own JSON text: copied once, never built into a tree.
    #[serde(borrow, deserialize_with = "raw_text")]
    pub input: Option<&'a str>,
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    #[serde(borrow)]
    pub content: Content<'a>,
    pub is_error: Bool,
}

/// A text field (a block's, a delta's) read from its literal: a huge text with escapes is
/// decoded once into a buffer of its size (serde_json's own string path grows a scratch buffer and copies out of
/// it: three times the text for a moment). Anything but a string is absent, as [`Str`] has it.
fn text_literal<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Str<'a>, D::Error> {
    let Some(literal) = raw_text(d)? else {
        return Ok(Str(None));
    };
    if !literal.starts_with('"') {
        return Ok(Str(None));
    }
    forge_adapter_support::json_string::literal_text(literal)
        .map(|text| Str(Some(text)))
        .map_err(serde::de::Error::custom)
}

/// A value's JSON text (`None` for `null`).
fn raw_text<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'a str>, D::Error> {
    Ok(Option::<&'a RawValue>::deserialize(d)?.map(RawValue::get))
}

/// The path fields of a writing tool's input, read (a second, small pass over the input)
/// only for the tools that write.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WriteTarget<'a> {
    #[serde(borrow)]
    pub file_path: Str<'a>,
    #[serde(borrow)]
    pub notebook_path: Str<'a>,
}

impl WriteTarget<'_> {
    pub fn field(&self, name: &str) -> Option<&str> {
        match name {
            "file_path" => self.file_path.as_deref(),
            "notebook_path" => self.notebook_path.as_deref(),
            _ => None,
        }
    }
}

/// `tool_use_result` of a user line: only whether a write created or updated its file.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolUseResult<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
}

/// The raw Anthropic stream event inside a `stream_event` line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub delta: Obj<Delta<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow, deserialize_with = "text_literal")]
    pub text: Str<'a>,
    #[serde(borrow)]
    pub thinking: Str<'a>,
}

/// The result's main-loop usage (Anthropic counters).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    pub input_tokens: U64,
    pub output_tokens: U64,
    pub cache_read_input_tokens: U64,
    pub cache_creation_input_tokens: U64,
}

impl WireUsage {
    pub fn to_usage(self) -> forge_domain::Usage {
        forge_domain::Usage {
            input_tokens: self.input_tokens.get().unwrap_or(0),
            output_tokens: self.output_tokens.get().unwrap_or(0),
            cache_read_tokens: self.cache_read_input_tokens.get().unwrap_or(0),
            cache_write_tokens: self.cache_creation_input_tokens.get().unwrap_or(0),
            reasoning_tokens: 0,
        }
    }
}

/// One entry of `permission_denials`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Denial<'a> {
    #[serde(borrow)]
    pub tool_name: Str<'a>,
}

/// Just the `type`, for lines whose full shape could not be read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct KindOnly<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub subtype: Str<'a>,
}
