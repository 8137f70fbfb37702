//! `CodeAgent`: the library's front door.
//!
//! ```text
//! let agent = CodeAgent::builder(runtime, registry)
//!     .provider("claude")
//!     .workdir("/path/to/repo")
//!     .timeout(Duration::from_secs(600))
//!     .build()?;
//! let result = agent.run(agent.request("Fix the failing test")).await;
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use forge_domain::{
    ExecutionMode, ExecutionRequest, ExecutionResult, ForgeError, OnRateLimit, ProviderId,
    Redactor, TimeoutSources, resolve_timeout,
};
use forge_ports::{
    EventSink, KillLadder, Provider, ProviderSettings, RegisteredTool, SpawnOptions, ToolContext,
    ToolHandler, ToolHost,
};
use tokio::sync::mpsc;

use crate::execution::{RunPlan, execute};
use crate::handle::{RunCanceller, RunHandle};
use crate::permission::PermissionBridge;
use crate::registry::ProviderRegistry;
use crate::runtime::Runtime;
use crate::tap::{SessionCallback, Tap};
use crate::tools::{FnHandler, ToolSet};

/// How many events a stream buffers before the run waits for its reader.
const STREAM_BUFFER: usize = 1024;

pub struct CodeAgentBuilder {
    runtime: Runtime,
    registry: ProviderRegistry,
    default_provider: Option<String>,
    settings: BTreeMap<String, ProviderSettings>,
    workdir: Option<PathBuf>,
    timeout: Option<Duration>,
    global_timeout: Option<Duration>,
    ladder: KillLadder,
    max_line_bytes: usize,
    redactor: Redactor,
    tools: ToolSet,
    tool_host: Option<Arc<dyn ToolHost>>,
    /// The first bad registration, reported by `build`.
    tool_error: Option<ForgeError>,
    on_rate_limit: OnRateLimit,
    event_sink: Option<Arc<dyn EventSink>>,
    on_session: Option<SessionCallback>,
    permissions: Option<PermissionBridge>,
}

impl CodeAgentBuilder {
    /// Where the permission requests of runs in `--permission-mode ask` go, and the rules
    /// and timeout they are decided under. Without it such a run is refused.
    pub fn permissions(mut self, bridge: PermissionBridge) -> Self {
        self.permissions = Some(bridge);
        self
    }

    /// Registers a tool the agent may call (served to the CLI over MCP): `handler` gets the
    /// arguments and a context with the run id and the sandboxed workspace, and returns the
    /// result or an error (the agent sees an error result; the run goes on).
    pub fn tool<F, Fut>(self, tool: forge_domain::HostedTool, handler: F) -> Self
    where
        F: Fn(serde_json::Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, ForgeError>> + Send + 'static,
    {
        self.tool_handler(tool, Arc::new(FnHandler(handler)))
    }

    /// Registers a tool with a handler object (e.g. a configured command).
    pub fn tool_handler(
        mut self,
        tool: forge_domain::HostedTool,
        handler: Arc<dyn ToolHandler>,
    ) -> Self {
        if let Err(e) = self.tools.add(tool, handler) {
            self.tool_error.get_or_insert(e);
        }
        self
    }

    /// The host that serves the registered tools to each run (the composition root passes
    /// the MCP adapter's).
    pub fn tool_host(mut self, host: Arc<dyn ToolHost>) -> Self {
        self.tool_host = Some(host);
        self
    }

    /// What a run does when its CLI gives up on a rate or usage limit with a reset time:
    /// fail (the default), or wait for the reset and resume the session.
    pub fn on_rate_limit(mut self, policy: OnRateLimit) -> Self {
        self.on_rate_limit = policy;
        self
    }

    /// Copies every run's events to `sink` (best effort: it never fails or slows a run;
    /// the result's `metadata.event_sink` says how delivery went).
    pub fn event_sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.event_sink = Some(sink);
        self
    }

    /// Called once per run with the CLI's session (conversation) id, when it first appears.
    pub fn on_session(mut self, callback: SessionCallback) -> Self {
        self.on_session = Some(callback);
        self
    }

    /// The provider used when a request does not name one (by registry name).
    pub fn provider(mut self, id: impl Into<String>) -> Self {
        self.default_provider = Some(id.into());
        self
    }

    /// Settings of one provider (binary, env, home, model, pricing, default timeout).
    pub fn provider_settings(mut self, id: impl Into<String>, settings: ProviderSettings) -> Self {
        self.settings.insert(id.into(), settings);
        self
    }

    /// Default workspace of requests made with [`CodeAgent::request`].
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// The agent-level timeout (a request's own timeout wins over it).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The global fallback timeout, below provider defaults.
    pub fn global_timeout(mut self, timeout: Duration) -> Self {
        self.global_timeout = Some(timeout);
        self
    }

    pub fn kill_ladder(mut self, ladder: KillLadder) -> Self {
        self.ladder = ladder;
        self
    }

    /// Cap of one stdout line (default 64 MiB); longer lines become an oversize event.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// Secrets to mask in artifacts and logs, besides those in each run's environment.
    pub fn redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    /// Builds every registered provider with its settings.
    ///
    /// # Errors
    /// [`ForgeError::ProviderNotSupported`] when the default provider or a provider with
    /// settings is not registered, or the registry is empty; [`ForgeError::InvalidRequest`] for a bad provider name.
    pub fn build(self) -> Result<CodeAgent, ForgeError> {
        if let Some(e) = self.tool_error {
            return Err(e);
        }
        if !self.tools.is_empty() && self.tool_host.is_none() {
            return Err(ForgeError::InvalidRequest {
                reason: "tools are registered but no tool host serves them".into(),
            });
        }
        let invalid = |e: forge_domain::IdError| ForgeError::InvalidRequest {
            reason: e.to_string(),
        };
        let mut providers = BTreeMap::new();
        for (name, settings) in &self.settings {
            let id = ProviderId::new(name.clone()).map_err(invalid)?;
            // A provider configured by kind (`kind = "acp"`) has the name its user chose.
            if settings.kind.is_some() {
                providers.insert(id.clone(), self.registry.build(&id, settings.clone())?);
            } else if !self.registry.ids().any(|r| r == &id) {
                return Err(self.registry.not_supported(name));
            }
        }
        for id in self.registry.ids() {
            let settings = self.settings.get(id.as_str()).cloned().unwrap_or_default();
            providers.insert(id.clone(), self.registry.build(id, settings)?);
        }
        let default_provider = match self.default_provider {
            Some(name) => {
                let id = ProviderId::new(name.clone()).map_err(invalid)?;
                if !providers.contains_key(&id) {
                    return Err(self.registry.not_supported(&name));
                }
                id
            }
            None => match providers.keys().next() {
                Some(first) => first.clone(),
                None => return Err(self.registry.not_supported("(none: the registry is empty)")),
            },
        };
        Ok(CodeAgent {
            inner: Arc::new(Inner {
                runtime: self.runtime,
                registry: self.registry,
                providers,
                default_provider,
                workdir: self.workdir,
                timeout_ms: self.timeout.map(duration_ms),
                global_timeout_ms: self.global_timeout.map(duration_ms),
                ladder: self.ladder,
                max_line_bytes: self.max_line_bytes,
                redactor: self.redactor,
                tools: self.tools.shared(),
                tool_host: self.tool_host,
                on_rate_limit: self.on_rate_limit,
                event_sink: self.event_sink,
                on_session: self.on_session,
                permissions: self.permissions,
            }),
        })
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

struct Inner {
    runtime: Runtime,
    registry: ProviderRegistry,
    providers: BTreeMap<ProviderId, Arc<dyn Provider>>,
    default_provider: ProviderId,
    workdir: Option<PathBuf>,
    timeout_ms: Option<u64>,
    global_timeout_ms: Option<u64>,
    ladder: KillLadder,
    max_line_bytes: usize,
    redactor: Redactor,
    tools: Arc<[RegisteredTool]>,
    tool_host: Option<Arc<dyn ToolHost>>,
    on_rate_limit: OnRateLimit,
    event_sink: Option<Arc<dyn EventSink>>,
    on_session: Option<SessionCallback>,
    permissions: Option<PermissionBridge>,
}

/// Runs and streams requests through registered providers. Cheap to clone.
#[derive(Clone)]
pub struct CodeAgent {
    inner: Arc<Inner>,
}

impl CodeAgent {
    pub fn builder(runtime: Runtime, registry: ProviderRegistry) -> CodeAgentBuilder {
        CodeAgentBuilder {
            runtime,
            registry,
            default_provider: None,
            settings: BTreeMap::new(),
            workdir: None,
            timeout: None,
            global_timeout: None,
            ladder: KillLadder::default(),
            max_line_bytes: SpawnOptions::default().max_line_bytes,
            redactor: Redactor::new(),
            tools: ToolSet::default(),
            tool_host: None,
            tool_error: None,
            on_rate_limit: OnRateLimit::default(),
            event_sink: None,
            on_session: None,
            permissions: None,
        }
    }

    /// A request for the default provider (the one set with `provider`, else the first
    /// registered) in the default workdir (`.` when none was set).
    pub fn request(&self, prompt: impl Into<String>) -> ExecutionRequest {
        let provider = self.inner.default_provider.clone();
        let workdir = self
            .inner
            .workdir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        ExecutionRequest::new(provider, prompt, workdir)
    }

    /// The provider registered as `id`.
    ///
    /// # Errors
    /// [`ForgeError::ProviderNotSupported`] when there is none.
    pub fn provider(&self, id: &ProviderId) -> Result<Arc<dyn Provider>, ForgeError> {
        self.inner
            .providers
            .get(id)
            .cloned()
            .ok_or_else(|| self.inner.registry.not_supported(id.as_str()))
    }

    pub fn providers(&self) -> impl Iterator<Item = &Arc<dyn Provider>> {
        self.inner.providers.values()
    }

    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Runs `request` to the end. Never fails: every problem is in the result's `errors`,
    /// with status error or partial, and the artifact bundle is written.
    pub async fn run(&self, mut request: ExecutionRequest) -> ExecutionResult {
        request.mode = ExecutionMode::Run;
        if self.inner.event_sink.is_some() || self.inner.on_session.is_some() {
            // The tap reads the events: through a handle nobody else reads.
            return self.start(request).result().await;
        }
        let canceller = RunCanceller::new();
        match self.plan(request) {
            Ok(plan) => execute(self.inner.runtime.clone(), plan, None, canceller).await,
            Err(result) => *result,
        }
    }

    /// Starts `request` and returns at once with a handle streaming its events.
    pub fn stream(&self, mut request: ExecutionRequest) -> RunHandle {
        request.mode = ExecutionMode::Stream;
        self.start(request)
    }

    /// Like [`CodeAgent::stream`] but keeps the request's own `mode` (what the bundle
    /// records): for callers that want `run` semantics with a handle to cancel through.
    pub fn start(&self, request: ExecutionRequest) -> RunHandle {
        let canceller = RunCanceller::new();
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        let provider = request.provider.clone();
        let (run_id, task) = match self.plan(request) {
            Ok(plan) => {
                let run_id = plan.run_id.clone();
                let run = execute(
                    self.inner.runtime.clone(),
                    plan,
                    Some(tx),
                    canceller.clone(),
                );
                (run_id, tokio::spawn(run))
            }
            // Refused before it started (unknown provider): the handle yields that result.
            Err(result) => {
                let result = *result;
                let run_id = result
                    .metadata
                    .run_id
                    .clone()
                    .unwrap_or_else(|| self.inner.runtime.ids.run_id());
                (run_id, tokio::spawn(async move { result }))
            }
        };
        let (rx, task) = match self.tap(&run_id) {
            Some(tap) => crate::tap::wrap(tap, rx, task, provider.clone(), STREAM_BUFFER),
            None => (rx, task),
        };
        RunHandle {
            run_id,
            provider,
            events: rx,
            canceller,
            task,
        }
    }

    fn tap(&self, run_id: &forge_domain::RunId) -> Option<Tap> {
        if self.inner.event_sink.is_none() && self.inner.on_session.is_none() {
            return None;
        }
        Some(Tap {
            run_id: run_id.clone(),
            sink: self.inner.event_sink.as_ref().map(|s| s.open(run_id)),
            on_session: self.inner.on_session.clone(),
            clock: Arc::clone(&self.inner.runtime.clock),
            session: None,
        })
    }

    fn plan(&self, request: ExecutionRequest) -> Result<RunPlan, Box<ExecutionResult>> {
        let run_id = self.inner.runtime.ids.run_id();
        let Some(provider) = self.inner.providers.get(&request.provider).cloned() else {
            let mut result = ExecutionResult::empty(
                request.provider.clone(),
                forge_domain::ExecutionStatus::Error,
            );
            result.metadata.run_id = Some(run_id);
            result.metadata.workdir = Some(request.workdir.display().to_string());
            result
                .errors
                .push(self.inner.registry.not_supported(request.provider.as_str()));
            return Err(Box::new(result));
        };
        // The seed's rule: nothing to ask is a success with no content, and no process.
        if request.prompt.trim().is_empty() {
            let mut result = ExecutionResult::empty(
                request.provider.clone(),
                forge_domain::ExecutionStatus::Success,
            );
            result.metadata.run_id = Some(run_id);
            result.metadata.workdir = Some(request.workdir.display().to_string());
            result.metadata.duration_ms = Some(0);
            return Err(Box::new(result));
        }
        let timeout_ms = resolve_timeout(TimeoutSources {
            call_ms: request.timeout_ms,
            agent_ms: self.inner.timeout_ms,
            provider_default_ms: provider.settings().timeout_ms,
            global_ms: self.inner.global_timeout_ms,
        });
        Ok(RunPlan {
            provider,
            request,
            run_id,
            timeout_ms,
            ladder: self.inner.ladder,
            max_line_bytes: self.inner.max_line_bytes,
            redactor: self.inner.redactor.clone(),
            tools: (!self.inner.tools.is_empty())
                .then(|| self.inner.tool_host.clone())
                .flatten()
                .map(|host| (host, Arc::clone(&self.inner.tools))),
            on_rate_limit: self.inner.on_rate_limit,
            rate_limit_waits: Vec::new(),
            permissions: self.inner.permissions.clone(),
        })
    }
}
