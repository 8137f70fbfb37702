//! Serde views of what `gemini` prints, borrowed from the line and limited to the fields the
//! decoder reads (serde skips the rest, e.g. every `timestamp`).
//!
//! stream-json (`-o stream-json`, one event per line) is read through one small struct per
//! kind rather than a tagged enum: a tagged enum would buffer each line into serde's
//! `Content` before dispatching; the kind is known before parsing (see the decoder), so each
//! struct reads its fields straight out of the line in one pass.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A JSON string borrowed from the line unless it has escapes.
///
/// serde borrows a `Cow<str>` only when the field's type is exactly `Cow<str>`; inside an
/// `Option` it always allocates. This newtype is what makes `Option<Str>` borrow.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct Str<'a>(#[serde(borrow)] pub Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Str<'_> {
    pub fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

// stream-json events, one struct per kind: a line has its kind read ([`KindOnly`]) and is
// then read into a small struct with only that kind's fields. One flat struct for
// all kinds was several times the size of a line, and moving it cost more than reading it.
//
// `type` in each, unread: a repeated `type` key fails the line, which is then reported.

/// `init`: the session.
#[derive(Debug, Deserialize)]
pub struct InitEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub session_id: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub model: Option<Str<'a>>,
}

/// `message`: user echo or assistant text (whole, or a `delta` piece).
#[derive(Debug, Deserialize)]
pub struct MessageEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub role: Option<Str<'a>>,
    #[serde(default, borrow, deserialize_with = "literal_text")]
    pub content: Option<Str<'a>>,
    #[serde(default)]
    pub delta: Option<bool>,
}

/// A text that can be huge (an answer), read from its literal (see
/// [`forge_adapter_support::json_string::deserialize_text`]).
fn literal_text<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Str<'a>>, D::Error> {
    forge_adapter_support::json_string::deserialize_text(d).map(|text| text.map(Str))
}

/// `tool_use`: a call, its parameters kept raw (they become the call's input verbatim).
#[derive(Debug, Deserialize)]
pub struct ToolUseEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub tool_name: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub tool_id: Option<Str<'a>>,
    #[serde(default, borrow)]
    #[serde(deserialize_with = "raw_text")]
    pub parameters: Option<&'a str>,
}

/// A value's JSON text (`None` for `null`): the parameters are copied as the CLI printed
/// them, never built into a tree.
fn raw_text<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'a str>, D::Error> {
    Ok(Option::<&'a RawValue>::deserialize(d)?.map(RawValue::get))
}

/// `tool_result`: a call's outcome.
#[derive(Debug, Deserialize)]
pub struct ToolResultEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub tool_id: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub status: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub output: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub error: Option<ErrorInfo<'a>>,
}

/// `error`: a warning or an error the CLI reported mid-run.
#[derive(Debug, Deserialize)]
pub struct ErrorEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub severity: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub message: Option<Str<'a>>,
}

/// `result`: the end-of-run report.
#[derive(Debug, Deserialize)]
pub struct ResultEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub status: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub error: Option<ErrorInfo<'a>>,
    #[serde(default, borrow)]
    pub stats: Option<StreamStats<'a>>,
}

/// Any other object with a `type`: read for its syntax only (it is kept raw).
#[derive(Debug, Deserialize)]
pub struct OtherEvent {
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
}

/// `error` of a `tool_result` or `result`: `{type, message}`.
#[derive(Debug, Deserialize)]
pub struct ErrorInfo<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub message: Option<Str<'a>>,
}

/// `result.stats`: `input_tokens` includes cached tokens, `input` excludes them.
#[derive(Debug, Deserialize, Default)]
pub struct StreamStats<'a> {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached: u64,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Per model, keyed by the `modelVersion` the API answered with (router model
    /// included). Only skipped over here (syntax check): it is read, with [`ModelsMap`],
    /// when a cost or the main model is asked for.
    #[serde(default, borrow)]
    pub models: Option<&'a RawValue>,
}

/// `stats.models` read as `(name, stats)` pairs: no map nodes, names borrowed.
#[derive(Debug, Deserialize)]
pub struct ModelsMap<'a>(
    #[serde(borrow, deserialize_with = "borrowed_entries")]
    pub  Vec<(Cow<'a, str>, StreamModelStats)>,
);

/// A map key borrowed from the line when it has no escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// A JSON object read as `(key, value)` pairs in document order.
fn borrowed_entries<'de, D, V>(d: D) -> Result<Vec<(Cow<'de, str>, V)>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Entries<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
        type Value = Vec<(Cow<'de, str>, V)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(2));
            while let Some((Key(key), value)) = map.next_entry::<Key<'de>, V>()? {
                out.push((key, value));
            }
            Ok(out)
        }
    }
    d.deserialize_map(Entries(std::marker::PhantomData))
}

#[derive(Debug, Deserialize, Default)]
pub struct StreamModelStats {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached: u64,
}

/// The single object of `-o json`: printed pretty (multi-line) on stdout on success, and on
/// stderr (with `error`, without `response`) on failure.
#[derive(Debug, Deserialize)]
pub struct JsonDocument<'a> {
    /// Present only on stream-json events: tells a one-line stream apart from a document.
    #[serde(rename = "type", default)]
    pub kind: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub session_id: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub response: Option<Str<'a>>,
    #[serde(default)]
    pub stats: Option<JsonStats>,
    #[serde(default, borrow)]
    pub error: Option<JsonError<'a>>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl JsonDocument<'_> {
    /// Whether this object is a `-o json` document rather than some other JSON.
    pub fn is_document(&self) -> bool {
        self.kind.is_none()
            && (self.response.is_some() || self.stats.is_some() || self.error.is_some())
    }
}

/// `error` of the `-o json` object: `{type, message, code}`; `code` is an HTTP status or
/// an exit code, a number or a string depending on where the error came from.
#[derive(Debug, Deserialize)]
pub struct JsonError<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub message: Option<Str<'a>>,
    #[serde(default)]
    pub code: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, Default)]
pub struct JsonStats {
    #[serde(default)]
    pub models: BTreeMap<String, JsonModelStats>,
    #[serde(default)]
    pub tools: Option<JsonToolStats>,
}

#[derive(Debug, Deserialize, Default)]
pub struct JsonModelStats {
    #[serde(default)]
    pub tokens: JsonTokens,
    #[serde(default)]
    pub api: Option<JsonApiStats>,
}

#[derive(Debug, Deserialize, Default)]
pub struct JsonTokens {
    /// Prompt tokens including cached ones.
    #[serde(default)]
    pub prompt: u64,
    #[serde(default)]
    pub candidates: u64,
    #[serde(default)]
    pub cached: u64,
    #[serde(default)]
    pub thoughts: u64,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct JsonApiStats {
    #[serde(default)]
    pub total_latency_ms: u64,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct JsonToolStats {
    #[serde(default)]
    pub total_calls: u64,
}

/// Only the `type` of an event, for lines whose full shape did not parse.
#[derive(Debug, Deserialize)]
pub struct KindOnly<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Str<'a>>,
}
