//! The ports a [`crate::CodeAgent`] is composed from.

use std::sync::Arc;

use forge_ports::{
    ArtifactStore, Clock, IdGenerator, Logger, Metrics, ProcessRunner, Vcs, Workspace,
};

/// Every port the use cases need. Cheap to clone (all `Arc`s).
#[derive(Clone)]
pub struct Runtime {
    pub runner: Arc<dyn ProcessRunner>,
    pub workspace: Arc<dyn Workspace>,
    pub artifacts: Arc<dyn ArtifactStore>,
    /// Optional: without it, providers are told "repository: unknown".
    pub vcs: Option<Arc<dyn Vcs>>,
    pub logger: Arc<dyn Logger>,
    pub metrics: Arc<dyn Metrics>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
}
