//! What `serve` hands forge-server: the configuration as `run` loads it, the shipped
//! providers, `task run`'s stores, delivery as the `approvals` commands open it, and the
//! Prometheus metrics of the runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_adapter_store::{DEFAULT_FILE, SqliteStore};
use forge_adapter_telemetry::PrometheusMetrics;
use forge_app::ProviderRegistry;
use forge_app::config::{ConfigError, EffectiveConfig, PermissionsConfig};
use forge_app::delivery::Delivery;
use forge_domain::{ForgeError, Redactor};
use forge_ports::{EnvSnapshot, PermissionRequests, TaskStore};
use forge_server::{Composition, ConfigOverrides, OpenError};

use crate::args::ConfigFlags;
use crate::cmd::delivery::open_reconciled;
use crate::compose;
use crate::config_load::load_config;
use crate::exit::Failure;

pub(super) struct CliComposition {
    pub metrics: Arc<PrometheusMetrics>,
    /// The queue's store on `serve --queue`, else the serve directory's.
    pub permissions: Arc<dyn PermissionRequests>,
    /// The webhooks' path, with `--queue` and a forge whose token is set.
    pub feedback: Option<Arc<forge_app::forges::ForgeFeedback>>,
}

#[async_trait]
impl Composition for CliComposition {
    fn config(&self, overrides: &ConfigOverrides) -> Result<EffectiveConfig, ConfigError> {
        load_config(&ConfigFlags {
            provider: overrides.provider.clone(),
            workdir: overrides.workdir.clone(),
            model: overrides.model.clone(),
            timeout_ms: overrides.timeout_ms,
            max_turns: overrides.max_turns,
            max_budget_usd: overrides.max_budget_usd,
            ..ConfigFlags::default()
        })
    }

    fn registry(&self) -> ProviderRegistry {
        compose::registry()
    }

    fn redactor(&self) -> Redactor {
        compose::environment_redactor()
    }

    fn environment(&self) -> EnvSnapshot {
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
            .collect()
    }

    async fn delivery(&self, repo: &Path) -> Result<Delivery, OpenError> {
        open_reconciled(repo, None).await.map_err(|e| match e {
            Failure::Usage(m) => OpenError::Refused(m),
            other => OpenError::Failed(other.to_string()),
        })
    }

    fn task_store_file(&self) -> &'static str {
        DEFAULT_FILE
    }

    async fn open_task_store(&self, db: PathBuf) -> Result<Arc<dyn TaskStore>, ForgeError> {
        let store = tokio::task::spawn_blocking(move || SqliteStore::open(db))
            .await
            .map_err(|e| ForgeError::io("task store: opening", e))??;
        Ok(Arc::new(store))
    }

    fn encode_metrics(&self) -> String {
        self.metrics.encode().unwrap_or_default()
    }

    fn permission_store(&self) -> Option<Arc<dyn PermissionRequests>> {
        Some(Arc::clone(&self.permissions))
    }

    fn permissions_config(&self, workdir: &Path) -> Result<PermissionsConfig, ConfigError> {
        crate::permissions::config(workdir).map_err(|e| match e {
            Failure::Config(e) => e,
            other => ConfigError::new("permissions", "permissions", other.to_string()),
        })
    }

    fn forge_feedback(&self) -> Option<Arc<forge_app::forges::ForgeFeedback>> {
        self.feedback.clone()
    }
}
