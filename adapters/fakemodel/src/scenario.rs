//! The scenario file: the scripted turns the fake model plays back, in order.
//!
//! A scenario is vendor-neutral. Tool calls are *abstract actions* (write a file, read a file,
//! run a shell command); each wire format maps them onto the concrete tools the CLI advertised
//! in its request (see [`crate::tools`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::builtin;
use crate::error::FakeModelError;

/// A whole scenario: a name and the model's turns, played one per model request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short identifier, shown in logs.
    pub name: String,
    /// What the scenario exercises (free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A prompt that suits the scenario (harnesses may pass it to the CLI; the server ignores it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    /// The model's answers, consumed one per (non side-call) request of a conversation.
    pub turns: Vec<Turn>,
    /// Other scripts, for conversations whose request mentions a marker (first match wins):
    /// lets one server answer a loop's planner and executor runs, each its own conversation,
    /// with different turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

/// A script of its own for the conversations whose request text contains `prompt_contains`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub prompt_contains: String,
    pub turns: Vec<Turn>,
}

/// One model answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Visible text; comes before the tool calls when both are present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Reasoning shown as a thinking block (Anthropic only; other wire formats omit it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Abstract tool calls; any present makes this a tool-use turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolAction>,
    /// Split the text into this many deltas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// Pause between streamed events, to simulate a slow model.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chunk_delay_ms: u64,
    /// Answer this turn's request with an HTTP error (the turn is not consumed while failing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<FailKnob>,
    /// On the first attempt, send this many stream events then drop the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_events: Option<usize>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// An abstract tool call, mapped per vendor onto the advertised tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolAction {
    /// Create or overwrite `path` (relative paths are joined to the CLI's working directory).
    WriteFile { path: String, content: String },
    /// Read `path` back.
    ReadFile { path: String },
    /// Run `command` in the CLI's shell tool.
    Shell {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Ask to run it outside the CLI's own sandbox, as a model does when the command
        /// must write (codex: `sandbox_permissions = "require_escalated"`, which codex asks
        /// its client to approve; the other CLIs have no such argument and ignore it).
        #[serde(default, skip_serializing_if = "is_false")]
        escalate: bool,
    },
    /// Call `tool` of the MCP server `forge` (see [`crate::mcp`]).
    Mcp {
        tool: String,
        #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
        arguments: serde_json::Value,
    },
}

/// An HTTP failure injected in place of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailKnob {
    /// HTTP status, e.g. 429 or 500.
    pub status: u16,
    /// How many requests fail before the turn is served (`"always"`: never served).
    #[serde(default = "Times::once")]
    pub times: Times,
    /// Error message (a vendor-appropriate default otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Fail inside a 200 stream instead of with the HTTP status: OpenAI Responses only (a
    /// `response.failed` event whose error code follows `status`, as the real API reports a
    /// rate limit mid-stream); the other vendors still get the HTTP error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub in_stream: bool,
    /// Gemini only: the `retryDelay` of the error's `google.rpc.RetryInfo` detail, protobuf
    /// duration text (`"1s"`, `"1.5s"`); `"0s"` when not given, so retries are quick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay: Option<String>,
    /// Gemini only: `false` leaves the `RetryInfo` detail out (a quota error that suggests no
    /// delay), so the CLI falls back to its own backoff.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub retry_info: bool,
}

impl FailKnob {
    /// The `RetryInfo.retryDelay` to send: `None` when the detail is left out.
    pub fn retry_info_delay(&self) -> Option<String> {
        self.retry_info
            .then(|| self.retry_delay.clone().unwrap_or_else(|| "0s".to_owned()))
    }
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// A repeat count, or `"always"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Times {
    Count(u32),
    Always(AlwaysWord),
}

/// The literal word `always`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlwaysWord {
    Always,
}

impl Times {
    fn once() -> Self {
        Times::Count(1)
    }

    /// Whether the request numbered `attempt` (0-based) for a turn still fails.
    pub fn covers(self, attempt: u32) -> bool {
        match self {
            Times::Count(n) => attempt < n,
            Times::Always(_) => true,
        }
    }
}

impl Turn {
    /// The final text split into `chunks` deltas on char boundaries (never empty pieces).
    pub fn text_chunks(&self) -> Vec<String> {
        let Some(text) = self.text.as_deref().filter(|t| !t.is_empty()) else {
            return Vec::new();
        };
        split_text(text, self.chunks.unwrap_or(1))
    }
}

/// Split `text` into at most `n` pieces of near-equal char count.
pub fn split_text(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(n);
    chars
        .chunks(size.max(1))
        .map(|piece| piece.iter().collect())
        .collect()
}

impl Scenario {
    /// Parse a TOML scenario.
    ///
    /// # Errors
    /// [`FakeModelError::Scenario`] when the text is not valid TOML or not a valid scenario.
    pub fn from_toml_str(text: &str) -> Result<Self, FakeModelError> {
        let scenario: Scenario =
            toml::from_str(text).map_err(|err| FakeModelError::scenario(err.message()))?;
        scenario.validated()
    }

    /// Parse a JSON scenario.
    ///
    /// # Errors
    /// [`FakeModelError::Scenario`] when the text is not valid JSON or not a valid scenario.
    pub fn from_json_str(text: &str) -> Result<Self, FakeModelError> {
        let scenario: Scenario =
            serde_json::from_str(text).map_err(|err| FakeModelError::scenario(err.to_string()))?;
        scenario.validated()
    }

    /// Load a scenario file: `.json` is JSON, anything else TOML.
    ///
    /// # Errors
    /// [`FakeModelError::Io`] when the file cannot be read, [`FakeModelError::Scenario`] when
    /// its content is invalid.
    pub fn from_path(path: &Path) -> Result<Self, FakeModelError> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| FakeModelError::io(format!("read scenario {}", path.display()), err))?;
        let is_json = path.extension().is_some_and(|ext| ext == "json");
        if is_json {
            Self::from_json_str(&text)
        } else {
            Self::from_toml_str(&text)
        }
    }

    /// An embedded scenario by name (see [`Scenario::builtin_names`]).
    ///
    /// # Errors
    /// [`FakeModelError::UnknownScenario`] for a name that is not built in.
    pub fn builtin(name: &str) -> Result<Self, FakeModelError> {
        let text = builtin::source(name).ok_or_else(|| FakeModelError::UnknownScenario {
            name: name.to_owned(),
            known: builtin::NAMES.join(", "),
        })?;
        Self::from_toml_str(text)
    }

    /// The names accepted by [`Scenario::builtin`].
    pub fn builtin_names() -> &'static [&'static str] {
        builtin::NAMES
    }

    fn validated(self) -> Result<Self, FakeModelError> {
        if self.turns.is_empty() {
            return Err(FakeModelError::scenario(
                "a scenario needs at least one turn",
            ));
        }
        for (index, route) in self.routes.iter().enumerate() {
            if route.prompt_contains.is_empty() || route.turns.is_empty() {
                return Err(FakeModelError::scenario(format!(
                    "route {index} needs a prompt_contains marker and at least one turn"
                )));
            }
        }
        let all_turns = self
            .turns
            .iter()
            .chain(self.routes.iter().flat_map(|r| r.turns.iter()));
        for (index, turn) in all_turns.enumerate() {
            let always_fails = turn
                .fail
                .as_ref()
                .is_some_and(|fail| matches!(fail.times, Times::Always(_)));
            if turn.text.is_none() && turn.tool_calls.is_empty() && !always_fails {
                return Err(FakeModelError::scenario(format!(
                    "turn {index} has neither text nor tool_calls"
                )));
            }
            if turn.chunks == Some(0) {
                return Err(FakeModelError::scenario(format!(
                    "turn {index}: chunks must be at least 1"
                )));
            }
            if let Some(status) = turn.fail.as_ref().map(|fail| fail.status) {
                if !(400..=599).contains(&status) {
                    return Err(FakeModelError::scenario(format!(
                        "turn {index}: fail.status {status} is not an HTTP error status"
                    )));
                }
            }
            if let Some(delay) = turn.fail.as_ref().and_then(|f| f.retry_delay.as_deref()) {
                let seconds = delay.strip_suffix('s').and_then(|s| s.parse::<f64>().ok());
                if !seconds.is_some_and(|s| s >= 0.0) {
                    return Err(FakeModelError::scenario(format!(
                        "turn {index}: fail.retry_delay {delay:?} is not a duration like \"1.5s\""
                    )));
                }
            }
        }
        Ok(self)
    }
}
