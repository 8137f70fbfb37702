//! `GET /health?projectPath=`: the seed's HealthStatus: per provider {installed,
//! authenticated, version, supported, error?}, and the project's checks.

use std::path::Path;

use axum::Json;
use axum::extract::{Query, State};
use forge_ports::EnvSnapshot;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::composition::ConfigOverrides;
use crate::error::ApiError;
use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::get;
    axum::Router::new().route("/health", get(health))
}

#[derive(Debug, Deserialize)]
pub struct HealthQuery {
    #[serde(rename = "projectPath")]
    pub project_path: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ProviderHealth {
    pub installed: bool,
    pub authenticated: bool,
    pub version: Option<String>,
    pub supported: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ProjectHealth {
    pub path: String,
    pub valid: bool,
    pub is_git: bool,
    pub writable: bool,
    pub has_forge_config: bool,
    pub has_instructions: bool,
}

pub async fn health(
    State(state): State<Shared>,
    Query(query): Query<HealthQuery>,
) -> Result<Json<Value>, ApiError> {
    let project = match &query.project_path {
        Some(path) => Some(
            state
                .roots
                .confine(path)
                .map_err(|e| ApiError::path("projectPath", &e))?,
        ),
        None => None,
    };
    let overrides = ConfigOverrides {
        workdir: project
            .clone()
            .unwrap_or_else(|| state.roots.dirs()[0].clone()),
        ..ConfigOverrides::default()
    };
    let config = state
        .composition
        .config(&overrides)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let registry = state.composition.registry();
    let env: EnvSnapshot = state.composition.environment();
    let mut providers = Map::new();
    for name in forge_app::doctor::registered_names(&registry) {
        let health =
            match forge_app::doctor::build_provider(&registry, &name, config.settings(&name)) {
                Ok(provider) => {
                    let d = provider.detect(state.runtime.runner.as_ref(), &env).await;
                    let usable = d.usable();
                    ProviderHealth {
                        installed: d.path.is_some(),
                        authenticated: d.authenticated.unwrap_or(false),
                        version: d.version.clone(),
                        supported: d.version_supported.unwrap_or(false),
                        error: (!usable).then(|| {
                            d.hints
                                .first()
                                .cloned()
                                .or_else(|| d.auth_detail.clone())
                                .unwrap_or_else(|| "not usable".into())
                        }),
                    }
                }
                Err(e) => ProviderHealth {
                    installed: false,
                    authenticated: false,
                    version: None,
                    supported: false,
                    error: Some(e.to_string()),
                },
            };
        providers.insert(name, serde_json::to_value(health).unwrap_or(Value::Null));
    }
    let mut body = json!({"status": "ok", "providers": providers});
    if let Some(dir) = project {
        let project = project_health(&state, &dir).await;
        body["project"] = serde_json::to_value(project).unwrap_or(Value::Null);
    }
    Ok(Json(body))
}

async fn project_health(state: &Shared, dir: &Path) -> ProjectHealth {
    let is_git = match &state.runtime.vcs {
        Some(vcs) => vcs.is_repository(dir).await.unwrap_or(false),
        None => false,
    };
    let writable = tempfile_probe(dir);
    ProjectHealth {
        path: dir.display().to_string(),
        valid: dir.is_dir(),
        is_git,
        writable,
        has_forge_config: dir.join("forge.toml").is_file(),
        has_instructions: ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]
            .iter()
            .any(|f| dir.join(f).is_file()),
    }
}

/// Writes and removes a probe file in `.forgecode/` (where bundles go).
fn tempfile_probe(dir: &Path) -> bool {
    let forge_dir = dir.join(".forgecode");
    let probe = forge_dir.join(format!(".health-probe-{}", std::process::id()));
    std::fs::create_dir_all(&forge_dir).is_ok()
        && std::fs::write(&probe, b"ok").is_ok()
        && std::fs::remove_file(&probe).is_ok()
}
