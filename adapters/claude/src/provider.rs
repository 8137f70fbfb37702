//! `forge_ports::Provider` for Claude Code.

use async_trait::async_trait;
use forge_domain::{ExecutionRequest, ForgeError, PermissionMode};
use forge_ports::{
    AgentSession, Capabilities, Decoder, Detection, EnvSnapshot, Invocation, InvocationContext,
    ProcessRunner, Provider, ProviderSettings, SessionServices,
};

use crate::decode::ClaudeDecoder;
use crate::home::UserPaths;
use crate::{argv, health, hints};

#[derive(Debug, Clone)]
pub struct ClaudeProvider {
    settings: ProviderSettings,
    user: UserPaths,
}

impl ClaudeProvider {
    /// A provider whose user paths (for copying auth into isolated homes) come from this
    /// process's `HOME` / `CLAUDE_CONFIG_DIR`.
    pub fn new(settings: ProviderSettings) -> Self {
        Self::with_user_paths(settings, UserPaths::from_env())
    }

    pub fn with_user_paths(settings: ProviderSettings, user: UserPaths) -> Self {
        Self { settings, user }
    }
}

#[async_trait]
impl Provider for ClaudeProvider {
    forge_adapter_support::provider_basics!(id: crate::provider_id(), install_hint: hints::INSTALL);

    fn session_travel(&self) -> Option<&dyn forge_ports::SessionTravel> {
        Some(&crate::travel::ClaudeSessions)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // In stream mode (`--include-partial-messages`); whole blocks in run mode.
            streams_text_deltas: true,
            max_turns: true,
            max_budget: true,
            resume: true,
            reports_cost: true,
            allowed_tools: true,
            append_system_prompt: true,
            permission_modes: PermissionMode::ALL.to_vec(),
        }
    }

    fn invocation(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
    ) -> Result<Invocation, ForgeError> {
        argv::build(&self.settings, &self.user, request, ctx)
    }

    /// `--permission-mode ask` holds a conversation (the stdio permission prompt); any
    /// other mode just prints.
    fn session(
        &self,
        request: &ExecutionRequest,
        _ctx: &InvocationContext,
        services: SessionServices,
    ) -> Option<Box<dyn AgentSession>> {
        (request.permission_mode == Some(PermissionMode::Ask)).then(|| {
            Box::new(crate::ask::AskSession::new(
                request.prompt.clone(),
                services.permissions,
            )) as Box<dyn AgentSession>
        })
    }

    fn decoder(&self, request: &ExecutionRequest) -> Box<dyn Decoder> {
        Box::new(ClaudeDecoder::new(request, self.settings.pricing.clone()))
    }

    async fn detect(&self, runner: &dyn ProcessRunner, env: &EnvSnapshot) -> Detection {
        health::detect(&self.settings, runner, env).await
    }
}
