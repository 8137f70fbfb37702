//! A provider turns a request into an invocation of its CLI, and the CLI's output into
//! canonical events and result pieces. It never spawns: the runtime does, through
//! [`crate::ProcessRunner`], so a provider is unit-tested by feeding it fixture lines.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use forge_domain::{
    AgentEvent, ExecutionMetadata, ExecutionRequest, ForgeError, PermissionMode, PricingTable,
    ProviderId, RunId, ToolCall,
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

/// Stateful, per-run decoder of one CLI's stdout.
pub trait Decoder: Send {
    /// Decodes one stdout line (terminator stripped) and appends the canonical events it
    /// yields to `out`. Unknown kinds become [`AgentEvent::Unknown`], non-JSON text
    /// [`AgentEvent::Unparsed`]; neither is an error.
    ///
    /// # Errors
    /// [`ForgeError::Parsing`] for a line that looks like an event but cannot be read (e.g.
    /// truncated JSON). The event for it (usually `Unparsed`) is still appended, and the
    /// caller goes on with the next line.
    fn decode_line(
        &mut self,
        line_no: u64,
        line: &str,
        out: &mut Vec<AgentEvent>,
    ) -> Result<(), ForgeError>;

    /// Decodes a whole recorded document: JSONL by default; providers whose CLI also prints
    /// a single JSON object or array (`--output-format json`) override this to accept it.
    /// Returns the parsing errors met; decoding never stops early.
    fn decode_document(&mut self, text: &str, out: &mut Vec<AgentEvent>) -> Vec<ForgeError> {
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

    /// Called once at the end with how the process ended (`None` when decoding a recording
    /// offline: no process). Returns the result pieces.
    fn finish(&mut self, exit: Option<&ProcessExit>) -> ResultPieces;
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

    /// Checks install, version range and authentication. Never fails: problems are reported
    /// in the [`Detection`] with hints.
    async fn detect(&self, runner: &dyn ProcessRunner, env: &EnvSnapshot) -> Detection;
}
