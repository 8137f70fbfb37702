//! The composition the server's own tests run on: the real local adapters, the shipped
//! providers, the built-in configuration (no user file, no environment).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_adapter_store::{DEFAULT_FILE, SqliteStore};
use forge_app::config::{ConfigError, EffectiveConfig, defaults, merge};
use forge_app::delivery::Delivery;
use forge_app::{ProviderRegistry, Runtime};
use forge_domain::{ForgeError, Redactor};
use forge_ports::{EnvSnapshot, PermissionRequests, TaskStore};

use crate::composition::{Composition, ConfigOverrides, OpenError};

#[derive(Default)]
pub struct TestComposition {
    /// Where permission requests are kept (`None`: nowhere).
    pub permissions: Option<Arc<dyn PermissionRequests>>,
    /// The forges' webhooks path (`None`: webhooks are not taken).
    pub feedback: Option<Arc<forge_app::forges::ForgeFeedback>>,
}

#[async_trait]
impl Composition for TestComposition {
    fn config(&self, overrides: &ConfigOverrides) -> Result<EffectiveConfig, ConfigError> {
        let mut config = merge(&[defaults()]);
        // The request's provider, as `run --provider` names it.
        if let Some(provider) = &overrides.provider {
            config.default_provider.value.clone_from(provider);
        }
        Ok(config)
    }

    fn registry(&self) -> ProviderRegistry {
        ProviderRegistry::new()
            .register(
                forge_adapter_claude::provider_id(),
                forge_adapter_claude::provider,
            )
            .register(
                forge_adapter_codex::provider_id(),
                forge_adapter_codex::provider,
            )
            .register(
                forge_adapter_gemini::provider_id(),
                forge_adapter_gemini::provider,
            )
    }

    fn redactor(&self) -> Redactor {
        Redactor::new()
    }

    fn environment(&self) -> EnvSnapshot {
        EnvSnapshot::new()
    }

    async fn delivery(&self, repo: &Path) -> Result<Delivery, OpenError> {
        Err(OpenError::Refused(format!(
            "no delivery in the server's tests ({})",
            repo.display()
        )))
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
        "# EOF\n".to_owned()
    }

    fn permission_store(&self) -> Option<Arc<dyn PermissionRequests>> {
        self.permissions.clone()
    }

    fn forge_feedback(&self) -> Option<Arc<forge_app::forges::ForgeFeedback>> {
        self.feedback.clone()
    }
}

/// The real local adapters: processes, files, `git`, no metrics.
pub fn runtime() -> Runtime {
    let runner: Arc<dyn forge_ports::ProcessRunner> =
        Arc::new(forge_adapter_process::TokioProcessRunner::new());
    Runtime {
        runner: Arc::clone(&runner),
        workspace: Arc::new(forge_adapter_fs::FsWorkspace::new()),
        artifacts: Arc::new(forge_adapter_fs::FsArtifactStore::new(Redactor::new())),
        vcs: Some(Arc::new(forge_adapter_git::GitCli::new(runner))),
        logger: Arc::new(forge_adapter_telemetry::TracingLogger::new()),
        metrics: Arc::new(forge_adapter_telemetry::NoopMetrics),
        clock: Arc::new(forge_adapter_telemetry::SystemClock::new()),
        ids: Arc::new(forge_adapter_telemetry::UuidV7Ids::new()),
    }
}

/// The parts of a test server confined to `root`, with the test composition and no queue;
/// each test changes what it needs.
pub fn parts(root: &Path, token: Option<&str>) -> crate::ServerParts {
    crate::ServerParts {
        roots: crate::Roots::new(&[root.to_path_buf()]).unwrap(),
        token: token.map(str::to_owned),
        runtime: runtime(),
        composition: Arc::new(TestComposition::default()),
        sink: None,
        queue: None,
    }
}

/// Serves `parts` on an ephemeral loopback port on this test's runtime: the base URL.
pub async fn serve(parts: crate::ServerParts) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = crate::router(crate::ServerState::new(parts));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    base
}

/// Sends `request`: its status and its JSON answer (`Null` when the body is not JSON).
pub async fn call(request: reqwest::RequestBuilder) -> (u16, serde_json::Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (
        status,
        response.json().await.unwrap_or(serde_json::Value::Null),
    )
}
