//! Starting a run for the API: the same configuration, agent and request the `run` command
//! builds, with the body's fields in place of the flags.

use std::sync::Arc;

use forge_app::CodeAgent;
use forge_app::from_config::apply_request_defaults;
use forge_app::permission::PermissionBridge;
use forge_domain::{ExecutionMode, ExecutionRequest, PermissionMode, SessionId};
use serde::Deserialize;

use super::error::ApiError;
use super::live::{LiveRun, pump};
use super::state::Shared;
use crate::composition::ConfigOverrides;

/// `POST /v1/runs`: the options of `forge-code-agent run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBody {
    #[serde(default)]
    pub provider: Option<String>,
    pub prompt: String,
    pub workdir: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub max_turns: Option<u32>,
    #[serde(default)]
    pub max_budget_usd: Option<f64>,
    #[serde(default)]
    pub permission_mode: Option<PermissionMode>,
    #[serde(default)]
    pub resume_session: Option<String>,
    /// A named agent of the CLI: the prompt becomes `@<agent> <prompt>` (the seed's rule).
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    #[serde(default)]
    pub append_system_prompt: Option<String>,
    /// The last subscriber going away cancels the run.
    #[serde(default)]
    pub cancel_on_disconnect: bool,
}

/// `@agent prompt`, except for slash commands, which pass through as typed.
pub fn with_agent(prompt: &str, agent: Option<&str>) -> String {
    match agent.map(str::trim).filter(|a| !a.is_empty()) {
        Some(agent) if !prompt.trim_start().starts_with('/') && !prompt.trim().is_empty() => {
            format!("@{} {prompt}", agent.trim_start_matches('@'))
        }
        _ => prompt.to_owned(),
    }
}

/// Validates `body`, starts the run and its pump, and registers it.
///
/// # Errors
/// 400 for a refused workdir, a bad configuration, an unknown provider or session id.
pub fn start(state: &Shared, body: RunBody) -> Result<Arc<LiveRun>, ApiError> {
    let workdir = state
        .roots
        .confine(&body.workdir)
        .map_err(|e| ApiError::path("workdir", &e))?;
    let overrides = ConfigOverrides {
        provider: body.provider.clone(),
        workdir: workdir.clone(),
        model: body.model.clone(),
        timeout_ms: body.timeout_ms,
        max_turns: body.max_turns,
        max_budget_usd: body.max_budget_usd,
    };
    let config = state
        .composition
        .config(&overrides)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let mut builder = CodeAgent::builder_from_config(
        &config,
        state.composition.registry(),
        state.runtime.clone(),
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))?
    .redactor(state.composition.redactor());
    if let Some(sink) = &state.sink {
        builder = builder.event_sink(Arc::clone(sink));
    }
    if body.permission_mode == Some(PermissionMode::Ask) {
        builder = builder.permissions(bridge(state, &workdir)?);
    }
    let agent = builder
        .build()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;

    let mut request = agent.request(with_agent(&body.prompt, body.agent.as_deref()));
    request.workdir.clone_from(&workdir);
    apply_request_defaults(&config, &mut request);
    request.permission_mode = body.permission_mode;
    refuse_unaskable(&agent, &request)?;
    request.resume_session_id = body
        .resume_session
        .map(SessionId::new)
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("resume_session: {e}")))?;
    request.allowed_tools = body.allowed_tools;
    request.disallowed_tools = body.disallowed_tools;
    request.append_system_prompt = body.append_system_prompt;
    request.mode = ExecutionMode::Stream;

    let provider = request.provider.as_str().to_owned();
    let handle = agent.start(request);
    let run = LiveRun::new(
        &handle,
        workdir,
        provider,
        state.runtime.clock.now_ms(),
        body.cancel_on_disconnect,
    );
    state.runs.insert(Arc::clone(&run));
    tokio::spawn(pump(handle, Arc::clone(&run), |_| {}));
    Ok(run)
}

/// `ask`: the requests go to the server's permission store (where `GET /v1/permissions`
/// and `permissions list` see them), decided under the workdir's `[permissions]`.
fn bridge(state: &Shared, workdir: &std::path::Path) -> Result<PermissionBridge, ApiError> {
    let store = crate::routes::permissions::store(state)?;
    let config = state
        .composition
        .permissions_config(workdir)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(PermissionBridge {
        store,
        config,
        owner: None,
    })
}

/// `ask` with a provider that cannot ask through forge: 400 saying why and what to use
/// instead, before anything starts (as `run` refuses it with exit 2).
fn refuse_unaskable(agent: &CodeAgent, request: &ExecutionRequest) -> Result<(), ApiError> {
    if request.permission_mode != Some(PermissionMode::Ask) {
        return Ok(());
    }
    let provider = agent
        .provider(&request.provider)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    if provider
        .capabilities()
        .permission_modes
        .contains(&PermissionMode::Ask)
    {
        return Ok(());
    }
    let id = provider.id();
    Err(ApiError::bad_request(
        forge_domain::permission::ask_refusal(id.as_str()).unwrap_or_else(|| {
            format!("permission_mode ask: provider {id} cannot ask through forge")
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::with_agent;

    #[test]
    fn the_agent_prefix_is_prepended_except_to_slash_commands() {
        let check = |prompt: &str, agent: Option<&str>, expected: &str| {
            assert_eq!(with_agent(prompt, agent), expected, "{prompt:?} {agent:?}");
        };
        check("plan it", Some("strategist"), "@strategist plan it");
        check("plan it", Some("@strategist"), "@strategist plan it");
        check("plan it", None, "plan it");
        check("plan it", Some("  "), "plan it");
        check("/compact", Some("strategist"), "/compact");
        check("  /help", Some("strategist"), "  /help");
        check("", Some("strategist"), "");
        check("a/b path", Some("x"), "@x a/b path");
    }
}
