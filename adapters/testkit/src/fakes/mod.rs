//! Hand-written fakes of the ports. Deterministic, in memory, and recording what they were
//! asked, so tests assert behaviour without processes or disks.

pub mod artifacts;
pub mod build_cache;
pub mod clock;
pub mod echo_provider;
pub mod forge;
pub mod loop_store;
pub mod notify;
pub mod observe;
pub mod process;
pub mod sink;
pub mod tool_host;
pub mod workspace;

pub use artifacts::{MemoryArtifactStore, StoredRun};
pub use build_cache::RecordingBuildCache;
pub use clock::{FixedClock, SequentialIds};
pub use echo_provider::EchoProvider;
pub use forge::MemoryForge;
pub use loop_store::{FlagStop, MemoryLoopStore};
pub use notify::RecordingNotifier;
pub use observe::{RecordingLogger, RecordingMetrics};
pub use process::{ScriptStep, ScriptedProcessRunner, ScriptedRun};
pub use sink::RecordingSink;
pub use tool_host::RecordingToolHost;
pub use workspace::PassthroughWorkspace;
