//! Serde views of what `gemini` prints, borrowed from the line and limited to the fields the
//! decoder reads (serde skips the rest, e.g. every `timestamp`).
//!
//! stream-json (`-o stream-json`, one event per line) is read through one flat struct rather
//! than a tagged enum: a tagged enum would buffer each line into serde's `Content` before
//! dispatching, a flat struct reads every field straight out of the line in one pass.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One stream-json event: `init`, `message`, `tool_use`, `tool_result`, `error`, `result`.
#[derive(Debug, Deserialize)]
pub struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    // init
    #[serde(default, borrow)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    // message
    #[serde(default, borrow)]
    pub role: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub content: Option<Cow<'a, str>>,
    #[serde(default)]
    pub delta: Option<bool>,
    // tool_use / tool_result
    #[serde(default, borrow)]
    pub tool_name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub tool_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub parameters: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub status: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub output: Option<Cow<'a, str>>,
    // tool_result / result
    #[serde(default, borrow)]
    pub error: Option<ErrorInfo<'a>>,
    // error
    #[serde(default, borrow)]
    pub severity: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
    // result
    #[serde(default)]
    pub stats: Option<StreamStats>,
}

/// `error` of a `tool_result` or `result`: `{type, message}`.
#[derive(Debug, Deserialize)]
pub struct ErrorInfo<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
}

/// `result.stats`: `input_tokens` includes cached tokens, `input` excludes them.
#[derive(Debug, Deserialize, Default)]
pub struct StreamStats {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached: u64,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub tool_calls: Option<u64>,
    /// Keyed by the `modelVersion` the API answered with (router model included).
    #[serde(default)]
    pub models: BTreeMap<String, StreamModelStats>,
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
    pub session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub response: Option<Cow<'a, str>>,
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
    pub kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
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
    pub kind: Option<Cow<'a, str>>,
}
