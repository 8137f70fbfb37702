//! `CodexProvider`: the `Provider` port for `codex exec --json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use forge_domain::{ExecutionRequest, ForgeError, PermissionMode, SessionId, Usage};
use forge_ports::{
    Capabilities, Decoder, Detection, EnvSnapshot, Invocation, InvocationContext, ProcessRunner,
    Provider, ProviderSettings,
};
use semver::Version;

use crate::argv::{INSTALL_HINT, build_invocation};
use crate::decode::CodexDecoder;
use crate::features::CliFeatures;
use crate::home::{CODEX_HOME_ENV, user_codex_home};

/// How many resumed-usage baselines are kept between `invocation` and `decoder`.
const MAX_BASELINES: usize = 64;

#[derive(Debug)]
pub struct CodexProvider {
    settings: ProviderSettings,
    /// The flag table row in use: the newest known, or the detected version's.
    features: Mutex<CliFeatures>,
    /// The resumed thread's total before the run (`ctx.resumed_usage`, else its rollout), seen
    /// by `invocation`, keyed by the thread being resumed, handed
    /// to the decoder built next for that thread (the port gives `decoder` no context).
    baselines: Mutex<BTreeMap<SessionId, Usage>>,
    /// The model the run's config or arguments choose when the request and settings name
    /// none (`config_model.rs`), seen by `invocation` and handed to the decoder built next
    /// for the same request (keyed by [`request_key`]).
    config_models: Mutex<BTreeMap<u64, String>>,
}

/// Identifies a request between `invocation` and `decoder`: two requests with the same
/// workdir, prompt and thread read the same config, so sharing a key shares the answer.
fn request_key(request: &ExecutionRequest) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    request.workdir.hash(&mut hasher);
    request.prompt.hash(&mut hasher);
    request.resume_session_id.hash(&mut hasher);
    request.env.hash(&mut hasher);
    hasher.finish()
}

impl CodexProvider {
    pub fn new(settings: ProviderSettings) -> Self {
        Self {
            settings,
            features: Mutex::new(CliFeatures::newest()),
            baselines: Mutex::new(BTreeMap::new()),
            config_models: Mutex::new(BTreeMap::new()),
        }
    }

    /// Builds argv for a known installed version instead of the newest known one.
    pub fn with_cli_version(self, version: &Version) -> Self {
        self.set_features(CliFeatures::for_version(version));
        self
    }

    pub fn features(&self) -> CliFeatures {
        *self.features.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_features(&self, features: CliFeatures) {
        *self.features.lock().unwrap_or_else(PoisonError::into_inner) = features;
    }

    /// The concrete decoder (with the resumed thread's baseline when one was recorded).
    pub fn codex_decoder(&self, request: &ExecutionRequest) -> CodexDecoder {
        let baseline = request.resume_session_id.as_ref().and_then(|id| {
            self.baselines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(id)
        });
        let config_model = self
            .config_models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request_key(request));
        CodexDecoder::new(request, &self.settings)
            .with_resumed_usage(baseline)
            .with_config_model(config_model)
    }
}

#[async_trait]
impl Provider for CodexProvider {
    forge_adapter_support::provider_basics!(id: crate::provider_id(), install_hint: INSTALL_HINT);

    fn session_travel(&self) -> Option<&dyn forge_ports::SessionTravel> {
        Some(&crate::travel::CodexSessions)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // `exec --json` prints agent messages whole, never token deltas.
            streams_text_deltas: false,
            // No max-turns or budget flag exists; enforcing them is the guarded executor's job.
            max_turns: false,
            max_budget: false,
            resume: self.features().exec_resume,
            // Tokens only; forge estimates cost from its pricing table.
            reports_cost: false,
            allowed_tools: false,
            append_system_prompt: self.features().developer_instructions,
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
        let invocation = build_invocation(&self.settings, self.features(), request, ctx)?;
        // The thread's total before this run: given by the caller, else read from the
        // thread's rollout in the CODEX_HOME this invocation uses.
        let before = request.resume_session_id.as_ref().and_then(|id| {
            ctx.resumed_usage.or_else(|| {
                let home = invocation
                    .env
                    .set
                    .get(CODEX_HOME_ENV)
                    .map(PathBuf::from)
                    .or_else(user_codex_home)?;
                crate::rollout::thread_total(&home, id.as_str())
            })
        });
        if let (Some(id), Some(usage)) = (&request.resume_session_id, before) {
            let mut baselines = self
                .baselines
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if baselines.len() >= MAX_BASELINES {
                baselines.pop_first();
            }
            baselines.insert(id.clone(), usage);
        }
        let named = request.model.is_some() || self.settings.model.is_some();
        if let Some(model) = (!named)
            .then(|| crate::config_model::for_invocation(&invocation))
            .flatten()
        {
            let mut models = self
                .config_models
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if models.len() >= MAX_BASELINES {
                models.pop_first();
            }
            models.insert(request_key(request), model);
        }
        Ok(invocation)
    }

    fn decoder(&self, request: &ExecutionRequest) -> Box<dyn Decoder> {
        Box::new(self.codex_decoder(request))
    }

    async fn detect(&self, runner: &dyn ProcessRunner, env: &EnvSnapshot) -> Detection {
        let (detection, version) = crate::health::detect(&self.settings, runner, env).await;
        if let Some(v) = version {
            self.set_features(CliFeatures::for_version(&v));
        }
        detection
    }
}
