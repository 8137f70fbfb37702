//! A provider turns a request into an invocation of its CLI, and the CLI's output into
//! canonical events and result pieces. It never spawns: the runtime does, through
//! [`crate::ProcessRunner`], so a provider is unit-tested by feeding it fixture lines.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use forge_domain::{
    AgentEvent, ExecutionMetadata, ExecutionRequest, ForgeError, PermissionMode, PricingTable,
    ProviderId, RawJson, RunId, ToolCall,
};

use crate::process::{Invocation, ProcessExit, ProcessRunner};

/// How a provider is configured: from code, a config file or the environment. The
/// composition root builds one per provider and hands it to the adapter's constructor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProviderSettings {
    /// The CLI binary; `None` means the adapter's default name on PATH.
    pub binary: Option<PathBuf>,
    /// Arguments added to every invocation, before the request's `extra_args`.
    pub args: Vec<String>,
    /// Environment added to every invocation (the request's `env` wins).
    pub env: BTreeMap<String, String>,
    /// The CLI's home/config directory. `None`: the user's own. Set: the adapter points the
    /// CLI there (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`) and writes what it needs.
    pub home: Option<PathBuf>,
    /// Give every run a private home under its artifact directory (parallel runs never share
    /// CLI state). Ignored when `home` is set.
    pub isolate_home: bool,
    /// Copy the user's own auth/config into an isolated home.
    pub copy_user_auth: bool,
    /// Default model when the request names none.
    pub model: Option<String>,
    /// Provider default timeout.
    pub timeout_ms: Option<u64>,
    /// Used to estimate cost when the CLI reports only tokens.
    pub pricing: PricingTable,
    /// The protocol of a provider configured by kind rather than registered by name
    /// (`kind = "acp"`): the registry builds it with that kind's factory.
    pub kind: Option<String>,
    /// A kind-configured provider's argv (`command = ["gemini", "--acp"]`); the first word
    /// is looked up on PATH.
    pub command: Vec<String>,
    /// forge permission mode (`default`, `accept-edits`, `bypass`, `plan`) → the agent's own
    /// mode id, overriding the adapter's matching.
    pub modes: BTreeMap<String, String>,
    /// The authentication method a kind-configured agent is asked to use when it requires
    /// authentication (`auth_method = "…"`, one of the ids it offers).
    pub auth_method: Option<String>,
}

/// What a provider's CLI can do, declared honestly: the runtime and the CLI use this to
/// refuse or emulate what a CLI lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    pub streams_text_deltas: bool,
    pub max_turns: bool,
    pub max_budget: bool,
    pub resume: bool,
    pub reports_cost: bool,
    pub allowed_tools: bool,
    pub append_system_prompt: bool,
    pub permission_modes: Vec<PermissionMode>,
}

/// Per-run facts the runtime knows and the provider needs to build argv and env.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvocationContext {
    pub run_id: RunId,
    /// The run's artifact directory (absolute).
    pub run_dir: PathBuf,
    /// The CLI home to use for this run, already resolved from settings (a configured home,
    /// a private one under `run_dir`, or the one a resumed session used). `None`: the user's.
    pub home: Option<PathBuf>,
    /// Whether `request.workdir` is inside a version-control repository, when known.
    pub in_repository: Option<bool>,
    /// The cumulative usage total a resumed session last reported, when known (for CLIs
    /// that report cumulative usage).
    pub resumed_usage: Option<forge_domain::Usage>,
    /// forge's tool server for this run, when tools are registered: the provider points
    /// its CLI at it (and allows its tools).
    pub mcp: Option<crate::tool_host::McpEndpoint>,
}

/// A snapshot of environment variables, passed in so detection is testable.
pub type EnvSnapshot = BTreeMap<String, String>;

/// Whether a provider is usable here, with hints a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Detection {
    pub provider: String,
    /// The binary as configured.
    pub binary: String,
    /// Where it was found, `None` when it was not.
    pub path: Option<PathBuf>,
    pub version: Option<String>,
    /// The versions this adapter is written for, e.g. `>=2.1.0, <3.0.0`.
    pub supported_range: String,
    pub version_supported: Option<bool>,
    /// `None`: could not tell.
    pub authenticated: Option<bool>,
    pub auth_detail: Option<String>,
    /// One line per problem found, each saying what to do.
    pub hints: Vec<String>,
}

impl Detection {
    /// Found, in range, and not known to be unauthenticated.
    pub fn usable(&self) -> bool {
        self.path.is_some()
            && self.version_supported != Some(false)
            && self.authenticated != Some(false)
    }
}

/// The provider's view of a run's outcome, merged by the runtime with what it knows itself
/// (exit code, timeout, cancel, raw lines, run id).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResultPieces {
    /// What the CLI's own end-of-run report said: `Some(true)` success, `Some(false)` failure,
    /// `None` no report arrived.
    pub reported_success: Option<bool>,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// Errors the CLI reported or the exit code means (typed, with hints).
    pub errors: Vec<ForgeError>,
    pub metadata: ExecutionMetadata,
}

/// What a stdout line was, as its decoder found out while decoding it: the runtime keeps
/// every raw line, and this spares it a second JSON syntax pass per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineShape {
    /// One whole JSON document once surrounding whitespace is trimmed, accepted by the
    /// decoder's own parser (the same syntax check as [`RawJson::from_line`]).
    Json,
    /// Text that is not one JSON document: a warning, a banner, a truncated line.
    Text,
    /// Nothing but whitespace.
    Blank,
}

impl LineShape {
    /// The shape of `line` found the slow way, by a syntax pass of its own: for lines a
    /// decoder does not parse itself (text it keeps as `Unparsed`). Cheap for such lines: the
    /// pass stops at the first byte that cannot start JSON.
    pub fn classify(line: &str) -> Self {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            LineShape::Blank
        } else if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
            LineShape::Json
        } else {
            LineShape::Text
        }
    }

    /// The raw line as a bundle keeps it: the JSON itself, or text as a JSON string; `None`
    /// for a blank line. Equal to [`RawJson::from_line`] whenever the shape is right.
    pub fn raw_line(self, line: &str) -> Option<RawJson> {
        match self {
            LineShape::Json => Some(RawJson::from_parsed(line)),
            LineShape::Text => Some(RawJson::string(line)),
            LineShape::Blank => None,
        }
    }

    /// [`LineShape::raw_line`] keeping the line without a copy when it is JSON.
    pub fn raw_line_owned(self, line: String) -> Option<RawJson> {
        match self {
            LineShape::Json => Some(RawJson::from_parsed_owned(line)),
            LineShape::Text => Some(RawJson::string(&line)),
            LineShape::Blank => None,
        }
    }
}

/// Stateful, per-run decoder of one CLI's stdout.
pub trait Decoder: Send {
    /// Decodes one stdout line (terminator stripped) and appends the canonical events it
    /// yields to `out`. Unknown kinds become [`AgentEvent::Unknown`], non-JSON text
    /// [`AgentEvent::Unparsed`]; neither is an error.
    ///
    /// Returns the line's [`LineShape`]: [`LineShape::Json`] only when the decoder's parse
    /// accepted the whole trimmed line as one JSON document (the runtime then keeps it
    /// verbatim without checking again), [`LineShape::Text`] only when it is not one
    /// ([`LineShape::classify`] decides for lines the decoder does not parse), and
    /// [`LineShape::Blank`] for a line of whitespace.
    ///
    /// # Errors
    /// [`ForgeError::Parsing`] for a line that looks like an event but cannot be read (e.g.
    /// truncated JSON, or valid JSON of an unexpected shape). The event for it (`Unparsed` or
    /// `Unknown`) is still appended, and the caller goes on with the next line; the line's
    /// shape is then not reported, and a caller that needs it uses [`LineShape::classify`].
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError>;

    /// Decodes `text` when it is one document of the CLI's non-streaming output form (a single
    /// JSON object or array, `--output-format json`): `Some` with the parsing errors met, or
    /// `None` when it is not one (JSONL, read line by line). Default: the CLI has no such
    /// form.
    fn decode_single_document(
        &mut self,
        _text: &str,
        _out: &mut Vec<AgentEvent>,
    ) -> Option<Vec<ForgeError>> {
        None
    }

    /// Decodes a whole recorded document: the single-document form when it is one (see
    /// [`Decoder::decode_single_document`]), else JSONL line by line. Returns the parsing
    /// errors met; decoding never stops early.
    fn decode_document(&mut self, text: &str, out: &mut Vec<AgentEvent>) -> Vec<ForgeError> {
        if let Some(errors) = self.decode_single_document(text, out) {
            return errors;
        }
        let mut errors = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                continue;
            }
            if let Err(e) = self.decode_line(i as u64 + 1, line, out) {
                errors.push(e);
            }
        }
        errors
    }

    /// Events the CLI reports only on stderr (gemini's retries), one stderr line at a time
    /// as the CLI writes it, so they reach the caller when they happen. Default: stdout says
    /// everything.
    fn decode_stderr_line(&mut self, _line: &str, _out: &mut Vec<AgentEvent>) {}

    /// The same from a whole stderr text, just before [`Decoder::finish`]: offline decoding
    /// of a recorded stderr, and runs whose runner offers no live stderr lines. Default: its
    /// lines through [`Decoder::decode_stderr_line`].
    fn decode_stderr(&mut self, stderr: &str, out: &mut Vec<AgentEvent>) {
        for line in stderr.lines() {
            self.decode_stderr_line(line, out);
        }
    }

    /// Called once at the end with how the process ended (`None` when decoding a recording
    /// offline: no process). Returns the result pieces.
    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces;
}

/// A boxed decoder (what [`Provider::decoder`] returns) is a decoder.
impl<D: Decoder + ?Sized> Decoder for Box<D> {
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<LineShape, ForgeError> {
        (**self).decode_line(line_no, line, out)
    }

    fn decode_single_document(
        &mut self,
        text: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Option<Vec<ForgeError>> {
        (**self).decode_single_document(text, out)
    }

    fn decode_document(&mut self, text: &str, out: &mut Vec<AgentEvent>) -> Vec<ForgeError> {
        (**self).decode_document(text, out)
    }

    fn decode_stderr_line(&mut self, line: &str, out: &mut Vec<AgentEvent>) {
        (**self).decode_stderr_line(line, out);
    }

    fn decode_stderr(&mut self, stderr: &str, out: &mut Vec<AgentEvent>) {
        (**self).decode_stderr(stderr, out);
    }

    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces {
        (**self).finish(exit)
    }
}

#[async_trait]
pub trait Provider: Send + Sync {
    fn id(&self) -> ProviderId;

    fn capabilities(&self) -> Capabilities;

    /// How a person installs the CLI (`npm i -g …`).
    fn install_hint(&self) -> String;

    /// The settings this provider was built with.
    fn settings(&self) -> &ProviderSettings;

    /// Builds the CLI invocation for `request`: program, argv, env, stdin payload and any
    /// files the CLI needs in its home. The prompt goes on stdin, never in argv, where the CLI
    /// allows it.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the request asks for something this CLI cannot do
    /// and silently dropping it would change the run's meaning.
    fn invocation(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
    ) -> Result<Invocation, ForgeError>;

    /// A fresh decoder for one run of `request`.
    fn decoder(&self, request: &ExecutionRequest) -> Box<dyn Decoder>;

    /// The client side of the conversation, for a CLI that holds one over stdin and stdout
    /// (its invocation sets `stdin_open`). Default: `None`, the CLI just prints.
    fn session(
        &self,
        _request: &ExecutionRequest,
        _ctx: &InvocationContext,
        _services: crate::session::SessionServices,
    ) -> Option<Box<dyn crate::session::AgentSession>> {
        None
    }

    /// How this CLI's sessions travel to another machine (issue 39): `None` when it cannot
    /// resume a session elsewhere (a follow-up then starts a new session given the
    /// conversation). Default: `None`.
    fn session_travel(&self) -> Option<&dyn crate::session_travel::SessionTravel> {
        None
    }

    /// Checks install, version range and authentication. Never fails: problems are reported
    /// in the [`Detection`] with hints.
    async fn detect(&self, runner: &dyn ProcessRunner, env: &EnvSnapshot) -> Detection;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_keep_the_raw_line_as_the_slow_check_would() {
        let check = |line: &str, shape: LineShape| {
            assert_eq!(LineShape::classify(line), shape, "{line:?}");
            let want = (!line.trim().is_empty()).then(|| RawJson::from_line(line));
            assert_eq!(shape.raw_line(line), want, "{line:?}");
        };
        check(" {\"type\":\"x\"}\r", LineShape::Json);
        check("[1, 2]", LineShape::Json);
        check("42", LineShape::Json);
        check("Warning: not json", LineShape::Text);
        check(r#"{"type":"#, LineShape::Text);
        check(" \t", LineShape::Blank);
    }
}
