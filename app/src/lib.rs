//! forge-app: the use cases, written against the ports only.
//!
//! [`CodeAgent`] runs or streams one request through a provider chosen by id from a
//! [`ProviderRegistry`]; the binary (the composition root) fills the registry and the
//! [`Runtime`] with real adapters, tests fill them with fakes.

pub mod agent;
pub mod assemble;
pub mod autoloop;
pub mod command_tool;
pub mod config;
pub mod confine;
pub mod delivery;
pub mod doctor;
pub mod execution;
pub mod forges;
pub mod from_config;
pub mod handle;
pub mod orphans;
pub mod permission;
pub mod queue;
mod rate_limit;
pub mod registry;
pub mod review;
mod run_plan;
pub mod runtime;
pub mod tap;
pub mod task;
pub mod tools;

pub use agent::{CodeAgent, CodeAgentBuilder};
pub use assemble::{AssembleInputs, assemble_result, decode_transcript};
pub use autoloop::{AutoLoop, LoopOutcome};
pub use handle::{RunCanceller, RunHandle};
pub use registry::{ProviderFactory, ProviderRegistry};
pub use runtime::Runtime;
pub use tap::SessionCallback;
