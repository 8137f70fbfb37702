//! [`AcpProvider`]: the [`Provider`] for any agent configured with `kind = "acp"`.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::{ExecutionRequest, ForgeError, PermissionMode, ProviderId};
use forge_ports::{
    AgentSession, Capabilities, Decoder, Detection, EnvSnapshot, Invocation, InvocationContext,
    ProcessRunner, Provider, ProviderSettings, SessionServices,
};

use crate::decode::AcpDecoder;
use crate::flow::{self, Flow, FlowConfig, Step};
use crate::rpc::{self, Kind};
use crate::session::AcpSession;

/// How long `doctor` waits for the answer to `initialize`.
const INITIALIZE_BOUND: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct AcpProvider {
    id: ProviderId,
    settings: ProviderSettings,
}

impl AcpProvider {
    pub fn new(id: ProviderId, settings: ProviderSettings) -> Self {
        Self { id, settings }
    }

    /// The agent's program: `binary` when set, else `command`'s first word.
    fn program(&self) -> PathBuf {
        self.settings
            .binary
            .clone()
            .or_else(|| self.settings.command.first().map(PathBuf::from))
            .unwrap_or_default()
    }

    fn flow(&self, request: &ExecutionRequest, ctx: Option<&InvocationContext>) -> FlowConfig {
        FlowConfig {
            workdir: request.workdir.clone(),
            prompt: request.prompt.clone(),
            resume: request
                .resume_session_id
                .as_ref()
                .map(|s| s.as_str().to_owned()),
            permission_mode: request.permission_mode,
            modes: self.settings.modes.clone(),
            auth_method: self.settings.auth_method.clone(),
            mcp: ctx.and_then(|c| c.mcp.clone()),
        }
    }

    /// What a request asks that ACP cannot carry: refused, never dropped.
    fn refuse_unsupported(&self, request: &ExecutionRequest) -> Result<(), ForgeError> {
        let asked = [
            (
                request.model.is_some() || self.settings.model.is_some(),
                "a model (`model`)",
            ),
            (
                !request.add_dirs.is_empty(),
                "extra directories (`add_dirs`)",
            ),
            (request.mcp_config.is_some(), "an MCP config file"),
            (request.output_schema.is_some(), "an output schema"),
        ];
        match asked.iter().find(|(set, _)| *set) {
            Some((_, what)) => Err(ForgeError::InvalidRequest {
                reason: format!(
                    "provider {}: ACP agents cannot be given {what} by forge yet",
                    self.id
                ),
            }),
            None => Ok(()),
        }
    }
}

#[async_trait]
impl Provider for AcpProvider {
    fn id(&self) -> ProviderId {
        self.id.clone()
    }

    fn install_hint(&self) -> String {
        format!(
            "install the agent so that `{}` runs (providers.{}.command)",
            self.settings.command.join(" "),
            self.id
        )
    }

    fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            streams_text_deltas: true,
            max_turns: false,
            max_budget: false,
            resume: true,
            reports_cost: false,
            allowed_tools: false,
            append_system_prompt: false,
            permission_modes: PermissionMode::ALL.to_vec(),
        }
    }

    fn invocation(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
    ) -> Result<Invocation, ForgeError> {
        self.refuse_unsupported(request)?;
        let mut args: Vec<String> = self.settings.command.iter().skip(1).cloned().collect();
        args.extend(self.settings.args.iter().cloned());
        args.extend(request.extra_args.iter().cloned());
        let mut invocation = Invocation::new(self.program(), args, request.workdir.clone());
        if let Some(home) = &ctx.home {
            invocation
                .env
                .set
                .insert("HOME".into(), home.display().to_string());
        }
        invocation.env.set.extend(self.settings.env.clone());
        invocation.env.set.extend(request.env.clone());
        invocation.stdin_open = true;
        invocation.install_hint = Some(self.install_hint());
        Ok(invocation)
    }

    fn decoder(&self, request: &ExecutionRequest) -> Box<dyn Decoder> {
        Box::new(AcpDecoder::new(self.flow(request, None)))
    }

    fn session(
        &self,
        request: &ExecutionRequest,
        ctx: &InvocationContext,
        services: SessionServices,
    ) -> Option<Box<dyn AgentSession>> {
        Some(Box::new(AcpSession::new(
            self.flow(request, Some(ctx)),
            services,
        )))
    }

    async fn detect(&self, runner: &dyn ProcessRunner, _env: &EnvSnapshot) -> Detection {
        let program = self.program();
        let mut detection = Detection {
            provider: self.id.to_string(),
            binary: self.settings.command.join(" "),
            path: runner.locate(&program),
            supported_range: format!("ACP protocol version {}", rpc::PROTOCOL),
            ..Detection::default()
        };
        if detection.path.is_none() {
            detection.hints.push(format!(
                "`{}` not found: {}",
                program.display(),
                self.install_hint()
            ));
            return detection;
        }
        let mut invocation = Invocation::new(
            program,
            self.settings.command.iter().skip(1).cloned().collect(),
            std::env::temp_dir(),
        );
        invocation.env.set.extend(self.settings.env.clone());
        invocation.stdin = Some(format!("{}\n", flow::initialize_request()).into_bytes());
        let bound = INITIALIZE_BOUND.as_secs();
        // Done at the answer: an agent may stay up after its stdin closes (codex-acp 0.16).
        let answered =
            |line: &str| matches!(rpc::read(line), Some(Kind::Answer(rpc::INITIALIZE, _)));
        let out = match runner
            .output_until(invocation, INITIALIZE_BOUND, &answered)
            .await
        {
            Ok(out) => out,
            Err(e) => {
                let hint = format!("initialize was not answered within {bound} s: {e}");
                detection.hints.push(hint);
                return detection;
            }
        };
        // The answer read as a run reads it: the same protocol check, the same errors.
        let mut flow = Flow::new(FlowConfig::default());
        let step = out.stdout.lines().find_map(|line| match rpc::read(line)? {
            Kind::Answer(rpc::INITIALIZE, result) => Some(flow.answer(rpc::INITIALIZE, result)),
            _ => None,
        });
        if let Some(init) = &flow.init {
            let info = init.agent_info.as_ref();
            detection.version = info.map(|i| format!("{} {}", i.name, i.version));
            detection.version_supported = Some(init.protocol_version == rpc::PROTOCOL);
            let methods = flow::auth_methods(init);
            detection.auth_detail = Some(match methods.is_empty() {
                true => "no authentication needed".to_owned(),
                false => format!("authentication methods offered: {}", methods.join(", ")),
            });
        }
        match step {
            Some(Step::Failed(reason)) => detection.hints.push(reason),
            Some(_) => {}
            None => detection.hints.push(format!(
                "the agent did not answer initialize (stderr: {})",
                forge_domain::error::excerpt(out.stderr.trim(), 300)
            )),
        }
        detection
    }
}
