//! [`GeminiProvider`]: the [`Provider`] for Google's Gemini CLI.

use std::path::PathBuf;

use async_trait::async_trait;
use forge_domain::{ExecutionRequest, ForgeError, PermissionMode};
use forge_ports::{
    Capabilities, Decoder, Detection, EnvSnapshot, Invocation, InvocationContext, ProcessRunner,
    Provider, ProviderSettings,
};

use crate::argv::{self, INSTALL_HINT};
use crate::decode::{DecoderConfig, GeminiDecoder};
use crate::health;

#[derive(Debug, Clone)]
pub struct GeminiProvider {
    settings: ProviderSettings,
    /// The user's own home, where `copy_user_auth` copies the login from.
    user_home: Option<PathBuf>,
}

impl GeminiProvider {
    /// A provider whose user home is `$HOME` of this process.
    pub fn new(settings: ProviderSettings) -> Self {
        Self {
            settings,
            user_home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// Overrides the user home `copy_user_auth` copies from (tests, embedding).
    #[must_use]
    pub fn with_user_home(mut self, user_home: Option<PathBuf>) -> Self {
        self.user_home = user_home;
        self
    }

    /// The concrete decoder (the trait method boxes it).
    pub fn gemini_decoder(&self, request: &ExecutionRequest) -> GeminiDecoder {
        GeminiDecoder::new(DecoderConfig {
            workdir: request.workdir.to_string_lossy().into_owned(),
            requested_model: request
                .model
                .clone()
                .or_else(|| self.settings.model.clone()),
            pricing: self.settings.pricing.clone(),
            resuming: request.resume_session_id.is_some(),
        })
    }
}

#[async_trait]
impl Provider for GeminiProvider {
    forge_adapter_support::provider_basics!(id: crate::provider_id(), install_hint: INSTALL_HINT);

    fn session_travel(&self) -> Option<&dyn forge_ports::SessionTravel> {
        Some(&crate::travel::GeminiSessions)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streams_text_deltas: true,
            // Through `model.maxSessionTurns` in the run's private settings.
            max_turns: true,
            max_budget: false,
            resume: true,
            reports_cost: false,
            // `--allowed-tools` (deprecated in favour of policies, still honoured in 0.61).
            allowed_tools: true,
            append_system_prompt: false,
            // `ask` is not among them: see `forge_domain::permission::ask_refusal`.
            permission_modes: PermissionMode::ALL
                .into_iter()
                .filter(|m| *m != PermissionMode::Ask)
                .collect(),
        }
    }

    fn invocation(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
    ) -> Result<Invocation, ForgeError> {
        argv::build(&self.settings, self.user_home.as_deref(), request, ctx)
    }

    fn decoder(&self, request: &ExecutionRequest) -> Box<dyn Decoder> {
        Box::new(self.gemini_decoder(request))
    }

    async fn detect(&self, runner: &dyn ProcessRunner, env: &EnvSnapshot) -> Detection {
        health::detect(&self.settings, runner, env).await
    }
}
