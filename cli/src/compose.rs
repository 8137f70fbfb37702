//! The composition root: which adapter implements which port.

use std::sync::Arc;

use forge_adapter_fs::{FsArtifactStore, FsWorkspace};
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_sandbox::SandboxedRunner;
use forge_adapter_sink::{HttpEventSink, SinkConfig};
use forge_adapter_telemetry::{NoopMetrics, SystemClock, TracingLogger, UuidV7Ids};
use forge_app::{CodeAgent, CodeAgentBuilder, ProviderRegistry, Runtime};
use forge_domain::Redactor;
use forge_ports::{ProcessRunner, Provider, ProviderSettings, ToolHost};

use forge_adapter_git::GitCli;

/// Every provider forge ships: one line each.
pub fn registry() -> ProviderRegistry {
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
        .register_kind(forge_adapter_acp::KIND, forge_adapter_acp::provider)
}

/// Secrets of this process's environment (API keys, tokens): masked in every artifact and
/// log, whichever provider runs.
pub fn environment_redactor() -> Redactor {
    let env: Vec<(String, String)> = std::env::vars().collect();
    Redactor::new().with_secret_env(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// `git` through a process runner of its own: for the commands that read a repository
/// before (or without) composing a runtime.
pub fn git() -> GitCli {
    GitCli::new(Arc::new(TokioProcessRunner::new()))
}

/// The ports implemented by the real adapters: processes (the agent and its code confined as
/// the user config's `[sandbox]` says: on unless set off), the file system, `git`, tracing.
pub fn runtime() -> Runtime {
    let here = std::env::current_dir().unwrap_or_default();
    let config = crate::sandbox::config(None, &here).unwrap_or_default();
    runtime_with(crate::sandbox::runner(config))
}

/// [`runtime`] for a command that runs an agent: `--sandbox` over the user config, and a
/// refusal (exit 2, reason and fix) when the sandbox is on and this machine cannot provide it.
///
/// # Errors
/// [`Failure`] for a bad `[sandbox]` or an unavailable sandbox.
pub async fn confined_runtime(
    flags: &crate::args::ConfigFlags,
) -> Result<Runtime, crate::exit::Failure> {
    let config = crate::sandbox::config(flags.sandbox, &crate::config_load::workdir(flags))?;
    let runner = crate::sandbox::runner(config);
    crate::sandbox::require(&runner).await?;
    Ok(runtime_with(runner))
}

/// A builder for an agent of every shipped provider on the [`confined_runtime`], secrets of
/// the environment redacted: what each agent-running command starts from.
///
/// # Errors
/// [`Failure`](crate::exit::Failure) as [`confined_runtime`]; a usage error for a
/// configuration the builder refuses.
pub async fn configured_agent(
    config: &forge_app::config::EffectiveConfig,
    flags: &crate::args::ConfigFlags,
) -> Result<CodeAgentBuilder, crate::exit::Failure> {
    let builder =
        CodeAgent::builder_from_config(config, registry(), confined_runtime(flags).await?)
            .map_err(|e| crate::exit::Failure::Usage(e.to_string()))?;
    Ok(builder.redactor(environment_redactor()))
}

/// [`runtime`] over a sandboxed runner the command chose (`--sandbox`, checked available).
pub fn runtime_with(sandboxed: Arc<SandboxedRunner>) -> Runtime {
    let runner: Arc<dyn ProcessRunner> = sandboxed;
    Runtime {
        runner: Arc::clone(&runner),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(environment_redactor())),
        vcs: Some(Arc::new(GitCli::new(runner))),
        logger: Arc::new(TracingLogger::new()),
        metrics: Arc::new(NoopMetrics),
        clock: Arc::new(SystemClock::new()),
        ids: Arc::new(UuidV7Ids::new()),
    }
}

/// The HTTP event sink for `--event-sink URL`, with `FORGE_EVENT_SINK_TOKEN` as its token.
///
/// # Errors
/// The reason a URL cannot be used.
pub fn event_sink(url: &str) -> Result<Arc<HttpEventSink>, String> {
    let token = std::env::var("FORGE_EVENT_SINK_TOKEN").ok();
    HttpEventSink::new(url, token, SinkConfig::default()).map(Arc::new)
}

/// A builder over the real registry and runtime, for library users configuring in code
/// (tools registered with `.tool(…)` are served over MCP).
pub fn agent_builder() -> CodeAgentBuilder {
    CodeAgent::builder(runtime(), registry())
        .redactor(environment_redactor())
        .tool_host(tool_host())
}

/// The host of registered tools: one MCP server per run (forge-adapter-mcp).
pub fn tool_host() -> Arc<dyn ToolHost> {
    Arc::new(forge_adapter_mcp::McpToolHost::new())
}

/// The ids of [`registry`], as strings.
pub(crate) fn provider_names(registry: &ProviderRegistry) -> Vec<String> {
    forge_app::doctor::registered_names(registry)
}

/// A provider built from its settings, outside an agent (for `doctor` and `events`).
pub(crate) fn build_provider(
    registry: &ProviderRegistry,
    name: &str,
    settings: ProviderSettings,
) -> Result<Arc<dyn Provider>, forge_domain::ForgeError> {
    forge_app::doctor::build_provider(registry, name, settings)
}
