//! What the server receives from the composition root (the `serve` command): the server
//! names no concrete adapter and reads no configuration file itself, so everything that does
//! — configuration loading, the provider registry, the local task stores, delivery with its
//! notifiers, the metrics' exposition — comes through this trait.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_app::ProviderRegistry;
use forge_app::config::{ConfigError, EffectiveConfig, PermissionsConfig};
use forge_app::delivery::Delivery;
use forge_domain::{ForgeError, Redactor};
use forge_ports::{PermissionRequests, TaskStore};

/// What a request may set over the configuration files (the `run` command's flags).
#[derive(Debug, Clone, Default)]
pub struct ConfigOverrides {
    pub provider: Option<String>,
    /// Where `forge.toml` is read from (empty: the server's working directory).
    pub workdir: PathBuf,
    pub model: Option<String>,
    pub timeout_ms: Option<u64>,
    pub max_turns: Option<u32>,
    pub max_budget_usd: Option<f64>,
}

/// Why a repository's delivery cannot be opened: the request's fault (400) or the
/// server's (500).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

/// The composition root's side of the server.
#[async_trait]
pub trait Composition: Send + Sync + 'static {
    /// The effective configuration for a request, from the real files and environment.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file, variable or field, the key and the reason.
    fn config(&self, overrides: &ConfigOverrides) -> Result<EffectiveConfig, ConfigError>;

    /// Every provider forge ships.
    fn registry(&self) -> ProviderRegistry;

    /// The secrets of the process's environment, masked in every run's artifacts.
    fn redactor(&self) -> Redactor;

    /// This process's environment as a run would see it (for provider detection).
    fn environment(&self) -> forge_ports::EnvSnapshot;

    /// The delivery of the local repository `repo` (the `approvals` commands' own),
    /// reconciled.
    ///
    /// # Errors
    /// [`OpenError`] when the repository's store or configuration cannot be opened.
    async fn delivery(&self, repo: &Path) -> Result<Delivery, OpenError>;

    /// Where `task run` keeps a repository's tasks, relative to the repository.
    fn task_store_file(&self) -> &'static str;

    /// The task store in the database file `db` (one a repository's `task run` wrote).
    ///
    /// # Errors
    /// When the file cannot be opened as a task store.
    async fn open_task_store(&self, db: PathBuf) -> Result<Arc<dyn TaskStore>, ForgeError>;

    /// The runtime's metrics in the OpenMetrics text format (`# EOF` included).
    fn encode_metrics(&self) -> String;

    /// Where the agents' permission requests are kept (issue 41): the queue's store on
    /// `serve --queue`, so its tasks' requests are seen too, else the store of the directory
    /// `serve` runs in. `None`: this server has none (a run in `ask` is refused).
    fn permission_store(&self) -> Option<Arc<dyn PermissionRequests>> {
        None
    }

    /// The `[permissions]` rules and timeout a run in `workdir` asks under (the user's,
    /// narrowed by the workdir's `forge.toml`).
    ///
    /// # Errors
    /// [`ConfigError`] for a section that cannot be read.
    fn permissions_config(&self, _workdir: &Path) -> Result<PermissionsConfig, ConfigError> {
        Ok(PermissionsConfig::default())
    }
    /// The forges' feedback path (`POST /v1/webhooks/…`); `None`: no webhooks are taken
    /// (no queue to put follow-ups on, or no forge configured).
    fn forge_feedback(&self) -> Option<Arc<forge_app::forges::ForgeFeedback>> {
        None
    }
}
