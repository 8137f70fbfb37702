//! The command line, declared with clap derive. `--help` is the reference: keep it exact.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use forge_domain::PermissionMode;

pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0    success
  1    the run failed (status error)
  2    usage or configuration error
  3    partial result (the CLI ended before its final report)
  124  timed out
  130  cancelled (Ctrl-C)";

const CONFIG_HELP: &str = "\
Configuration precedence (highest first): flags > environment (FORGE_*, CLAUDE_CLI_*) >
project forge.toml (in the workdir) > user config ($FORGE_CONFIG, else
$XDG_CONFIG_HOME/forge-code-agent/config.toml, else ~/.config/forge-code-agent/config.toml) >
defaults. `forge-code-agent config show` prints each value and where it came from.";

/// Drive coding-agent CLIs (claude, codex, gemini) as supervised subprocesses: one event
/// stream, one result, an artifact bundle per run.
#[derive(Debug, Parser)]
#[command(
    name = "forge-code-agent",
    version,
    propagate_version = true,
    after_help = format!("{CONFIG_HELP}\n\n{EXIT_CODES}")
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a prompt to the end and print the result
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Run a prompt and print its events as they arrive
    #[command(after_help = EXIT_CODES)]
    Stream(RunArgs),
    /// Check that the providers' CLIs are installed, supported and logged in, and that the
    /// project can be used
    #[command(
        after_help = "Exit codes:\n  0  the chosen (or default) provider is usable\n  1  it is not\n  2  usage or configuration error"
    )]
    Doctor(DoctorArgs),
    /// List and inspect recorded runs (.forgecode/runs/)
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Decode a recorded CLI transcript (its stdout JSONL) offline into canonical events and
    /// a result
    Events(EventsArgs),
    /// Show the effective configuration
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Install the pinned CLIs (once), start the embedded fake model and run a task through
    /// the guarded pipeline with each provider's real CLI, offline: validation, a correction
    /// resuming the same session, review, risk, commit
    #[command(
        after_help = "Exit codes:\n  0  every provider succeeded (task committed; with --run: run succeeded)\n  1  a provider failed\n  2  usage error, or Node.js/npm (or git) missing"
    )]
    Demo(crate::cmd::demo::DemoArgs),
    /// The scripted fake model server the real CLIs can be pointed at (offline testing)
    #[command(subcommand)]
    FakeModel(crate::cmd::fake_model::FakeModelCommand),
    /// Guarded tasks: a task in, a validated, reviewed, risk-scored change out
    #[command(subcommand)]
    Task(crate::cmd::task::TaskCmd),
    /// Changes held for a person: list, show, approve, reject
    #[command(subcommand)]
    Approvals(crate::cmd::approvals::ApprovalsCmd),
    /// An agent's permission requests (run --permission-mode ask): list, allow, deny
    #[command(subcommand)]
    Permissions(crate::cmd::permissions::PermissionsCmd),
    /// Review a change (base...head) for a pull request: the deterministic rules and an agent
    /// of any provider, read-only, written as Markdown, JSON, SARIF and a GitHub review
    #[command(after_help = crate::cmd::review::REVIEW_EXIT_CODES)]
    Review(Box<crate::cmd::review::ReviewArgs>),
    /// Serve the API, live event streams and the web page over HTTP
    Serve(crate::cmd::serve::ServeArgs),
    /// Forges (GitHub, GitLab) without a public URL: read their events through the API
    #[command(subcommand)]
    Forge(crate::cmd::forge::poll::ForgeCmd),
    /// Claim tasks from a queue (PostgreSQL or SQLite) and run them, until SIGTERM
    Worker(crate::cmd::queue::worker::WorkerArgs),
    /// The autonomous loop: a planner proposes the next task, an executor carries it out,
    /// until the goal is done or a safety rail stops it (state saved after every step)
    Auto(crate::cmd::auto::AutoArgs),
    /// Print a shell completion script
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Internal: the sandbox's init. Relays the run's routes and proxy into the sandbox's
    /// own network and runs the command after `--` (forge writes this argv; hidden)
    #[command(name = "__sandbox-bridge", hide = true)]
    SandboxBridge(SandboxBridgeArgs),
}

/// `__sandbox-bridge --spec <json> -- <argv>…`, as `forge_adapter_egress::Egress::bridge_args`
/// writes it.
#[derive(Debug, Args)]
pub struct SandboxBridgeArgs {
    /// The listeners to open inside the sandbox (JSON)
    #[arg(long)]
    pub spec: String,
    /// The command to run inside the sandbox
    #[arg(last = true, required = true, num_args = 1..)]
    pub argv: Vec<std::ffi::OsString>,
}

/// Flags that are configuration: they override the environment and config files.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigFlags {
    /// Provider to use: claude, codex or gemini [default: from configuration, else claude]
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: Option<String>,
    /// The workspace the agent works in (and where forge.toml and .forgecode/ live)
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Model to ask the provider for
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Stop the run after this many seconds (kill ladder, exit 124)
    #[arg(long = "timeout", value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout_ms: Option<u64>,
    /// Maximum agent turns
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Spending cap of this run, where the CLI supports one
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// The provider's CLI binary (path, or a name looked up on PATH)
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// Extra environment for the CLI, KEY=VAL (repeatable)
    #[arg(long = "env", value_name = "KEY=VAL", value_parser = parse_key_val)]
    pub env: Vec<(String, String)>,
    /// The CLI's home/config directory
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Give the run a private CLI home under its artifact directory
    #[arg(long)]
    pub isolate_home: bool,
    /// When the CLI gives up on a rate or usage limit that says when it resets: wait for the
    /// reset (within --timeout) and resume the session, or fail [default: fail]
    #[arg(long, value_name = "wait|fail", value_parser = parse_on_rate_limit)]
    pub on_rate_limit: Option<forge_domain::OnRateLimit>,
    /// Confine the agent and its code (bubblewrap): on, or off to run unconfined
    /// [default: [sandbox] mode of the user config, else on]
    #[arg(long, value_name = "on|off", value_parser = forge_domain::sandbox::SandboxMode::parse)]
    pub sandbox: Option<forge_domain::sandbox::SandboxMode>,
}

fn parse_on_rate_limit(text: &str) -> Result<forge_domain::OnRateLimit, String> {
    text.parse()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PermissionArg {
    Default,
    AcceptEdits,
    Bypass,
    Plan,
}

/// `run`'s and `stream`'s permission modes: the task commands' and `ask`, which only a
/// run can do so far (a person answers each request; docs/permissions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunPermissionArg {
    Default,
    AcceptEdits,
    Bypass,
    Plan,
    Ask,
}

impl From<RunPermissionArg> for PermissionMode {
    fn from(p: RunPermissionArg) -> Self {
        match p {
            RunPermissionArg::Default => PermissionMode::Default,
            RunPermissionArg::AcceptEdits => PermissionMode::AcceptEdits,
            RunPermissionArg::Bypass => PermissionMode::Bypass,
            RunPermissionArg::Plan => PermissionMode::Plan,
            RunPermissionArg::Ask => PermissionMode::Ask,
        }
    }
}

impl From<PermissionArg> for PermissionMode {
    fn from(p: PermissionArg) -> Self {
        match p {
            PermissionArg::Default => PermissionMode::Default,
            PermissionArg::AcceptEdits => PermissionMode::AcceptEdits,
            PermissionArg::Bypass => PermissionMode::Bypass,
            PermissionArg::Plan => PermissionMode::Plan,
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub config: ConfigFlags,
    /// Permission mode, mapped to the CLI's own flags; `ask`: a person decides each request
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<RunPermissionArg>,
    /// Resume this session of the CLI
    #[arg(long, value_name = "SESSION")]
    pub resume: Option<String>,
    /// Tools the agent may use (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    pub allowed_tools: Vec<String>,
    /// Tools the agent must not use (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    pub disallowed_tools: Vec<String>,
    /// Text appended to the CLI's system prompt
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Print the ExecutionResult as JSON
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// Print each canonical event as a JSON line, then the result as the last line
    #[arg(long)]
    pub jsonl: bool,
    /// POST each event to this URL, best effort (bearer token: FORGE_EVENT_SINK_TOKEN)
    #[arg(long, value_name = "URL")]
    pub event_sink: Option<String>,
    /// The prompt; `-` or absent: read it from stdin
    pub prompt: Option<String>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check only this provider (and exit 1 when it is not usable)
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: Option<String>,
    /// The binary to check for that provider
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// The project to check
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Recorded runs, newest first
    List {
        /// The workspace whose runs to list
        #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
        workdir: PathBuf,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// One run's result (and events)
    Show {
        /// The run id
        id: String,
        /// The workspace of the run
        #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
        workdir: PathBuf,
        /// Also print the run's events
        #[arg(long)]
        events: bool,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// The provider whose CLI wrote the transcript
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: String,
    /// The transcript (the CLI's stdout); `<name>.meta.json` and `<name>.stderr.txt` beside
    /// it are used when present
    #[arg(long, value_name = "TRANSCRIPT")]
    pub file: PathBuf,
    /// The CLI's exit code [default: `exit_code` of the .meta.json, else none]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub exit_code: Option<i32>,
    /// The workspace whose configuration applies (pricing, models)
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Print the ExecutionResult as JSON
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// Print each event as a JSON line, then the result
    #[arg(long)]
    pub jsonl: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration and the source of each value
    Show {
        #[command(flatten)]
        config: ConfigFlags,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

fn parse_seconds(s: &str) -> Result<u64, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("{s:?} is not a number of seconds"));
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked finite and non-negative; saturates far beyond any real timeout"
    )]
    Ok((secs * 1000.0).round() as u64)
}

fn parse_key_val(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("{s:?} is not KEY=VAL")),
    }
}
