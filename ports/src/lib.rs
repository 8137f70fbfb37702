//! forge-ports: the traits the use cases are written against.
//!
//! Each port is an async-trait (no runtime named here) whose methods say in an `# Errors`
//! section which [`forge_domain::ForgeError`] variant an implementation returns and when.
//! Adapters implement them; `forge-app` composes them; only the binary picks implementations.

pub mod artifacts;
pub mod autoloop;
pub mod clock;
pub mod logger;
pub mod metrics;
pub mod process;
pub mod provider;
pub mod vcs;
pub mod workspace;

pub use artifacts::{ArtifactStore, RunArtifacts, RunRecord, RunSummary};
pub use autoloop::{LoopStore, StopSignal};
pub use clock::{Clock, IdGenerator};
pub use logger::{Logger, RunLogger};
pub use metrics::Metrics;
pub use process::{
    CapturedOutput, EnvSpec, FileSource, Invocation, KillLadder, PreparedFile, ProcessExit,
    ProcessKiller, ProcessRunner, RunningProcess, SpawnOptions, StdoutItem,
};
pub use provider::{
    Capabilities, Decoder, Detection, EnvSnapshot, InvocationContext, LineShape, Provider,
    ProviderSettings, ResultPieces,
};
pub use vcs::Vcs;
pub use workspace::Workspace;
