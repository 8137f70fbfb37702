//! forge-ports: the traits the use cases are written against.
//!
//! Each port is an async-trait (no runtime named here) whose methods say in an `# Errors`
//! section which [`forge_domain::ForgeError`] variant an implementation returns and when.
//! Adapters implement them; `forge-app` composes them; only the binary picks implementations.

pub mod artifacts;
pub mod autoloop;
pub mod buildcache;
pub mod clock;
pub mod files;
pub mod forge;
pub mod forge_deliveries;
pub mod index;
pub mod logger;
pub mod metrics;
pub mod notify;
pub mod permission;
pub mod process;
pub mod provider;
pub mod queue;
pub mod repomap;
pub mod sandbox;
pub mod session;
pub mod session_archives;
pub mod session_travel;
pub mod share;
pub mod sink;
pub mod store;
pub mod tool_host;
pub mod vcs;
pub mod webhook;
pub mod workspace;

pub use artifacts::{ArtifactStore, RunArtifacts, RunRecord, RunSummary};
pub use autoloop::{LoopStore, StopSignal};
pub use buildcache::{BuildCache, CacheClaim, ClaimRequest};
pub use clock::{Clock, IdGenerator};
pub use files::FileStore;
pub use forge::Forge;
pub use forge_deliveries::ForgeDeliveries;
pub use index::{EntryKind, IndexEntry, RepoIndexer};
pub use logger::{Logger, RunLogger};
pub use metrics::Metrics;
pub use notify::Notifier;
pub use permission::{PermissionAsker, PermissionRequests};
pub use process::{
    CapturedOutput, EnvSpec, FileSource, Invocation, KillLadder, PreparedFile, ProcessExit,
    ProcessKiller, ProcessRunner, RunningProcess, SandboxDenials, SpawnOptions, StderrLines,
    StdoutItem,
};
pub use provider::{
    Capabilities, Decoder, Detection, EnvSnapshot, InvocationContext, LineShape, Provider,
    ProviderSettings, ResultPieces,
};
pub use queue::{QueueApprovals, TaskQueue};
pub use repomap::{RepoMapper, RepoTags};
pub use sandbox::{EgressSession, NetworkConfinement, SandboxDescription, SandboxNetwork};
pub use session::{AgentSession, LaterStep, SessionServices, SessionStep, StdinWriter};
pub use session_archives::SessionArchives;
pub use session_travel::SessionTravel;
pub use share::ShareLinks;
pub use sink::{EventSink, RunSink};
pub use store::{DecideOutcome, TaskStore};
pub use tool_host::{
    McpEndpoint, RegisteredTool, ToolContext, ToolHandler, ToolHost, ToolRun, ToolServer,
};
pub use vcs::{
    AddedLines, CommitAuthor, PathChange, PathChangeKind, RemoteCommit, Vcs, WorktreeInfo,
};
pub use webhook::WebhookCodec;
pub use workspace::Workspace;
