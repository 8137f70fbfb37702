//! Builds a CodeAgent over the testkit fakes.

use std::sync::Arc;

use forge_app::{CodeAgent, ProviderRegistry, Runtime};
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{KillLadder, Provider, ProviderSettings};
use forge_testkit::fakes::{
    EchoProvider, FixedClock, MemoryArtifactStore, PassthroughWorkspace, RecordingLogger,
    RecordingMetrics, ScriptedProcessRunner, ScriptedRun, SequentialIds,
};

pub struct Harness {
    pub agent: CodeAgent,
    pub runner: ScriptedProcessRunner,
    pub store: MemoryArtifactStore,
    pub metrics: RecordingMetrics,
    pub logger: RecordingLogger,
}

pub fn registry() -> ProviderRegistry {
    ProviderRegistry::new().register(ProviderId::new("echo").unwrap(), |s: ProviderSettings| {
        Arc::new(EchoProvider::new(s)) as Arc<dyn Provider>
    })
}

pub fn harness_with(
    runs: Vec<ScriptedRun>,
    settings: ProviderSettings,
    workspace: PassthroughWorkspace,
) -> Harness {
    let runner = ScriptedProcessRunner::new(runs);
    let store = MemoryArtifactStore::new();
    let metrics = RecordingMetrics::default();
    let logger = RecordingLogger::default();
    let runtime = Runtime {
        runner: Arc::new(runner.clone()),
        workspace: Arc::new(workspace),
        artifacts: Arc::new(store.clone()),
        vcs: None,
        logger: Arc::new(logger.clone()),
        metrics: Arc::new(metrics.clone()),
        clock: Arc::new(FixedClock::default()),
        ids: Arc::new(SequentialIds::default()),
    };
    let agent = CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", settings)
        .workdir("/ws")
        .kill_ladder(KillLadder {
            interrupt_grace: std::time::Duration::from_millis(10),
            terminate_grace: std::time::Duration::from_millis(10),
        })
        .build()
        .unwrap();
    Harness {
        agent,
        runner,
        store,
        metrics,
        logger,
    }
}

pub fn harness(runs: Vec<ScriptedRun>) -> Harness {
    harness_with(
        runs,
        ProviderSettings::default(),
        PassthroughWorkspace::default(),
    )
}

pub fn request(h: &Harness, prompt: &str) -> ExecutionRequest {
    h.agent.request(prompt)
}

pub const SESSION: &str = r#"{"type":"session","id":"s-1"}"#;
pub const TEXT: &str = r#"{"type":"text","text":"hello"}"#;
pub const OK: &str = r#"{"type":"result","ok":true,"text":"all done"}"#;

/// A runtime over the REAL process runner, file system and clock (no VCS, no telemetry).
pub fn real_runtime() -> Runtime {
    use forge_adapter_fs::{FsArtifactStore, FsWorkspace};
    use forge_adapter_telemetry::{NoopLogger, NoopMetrics, SystemClock, UuidV7Ids};
    Runtime {
        runner: Arc::new(forge_adapter_process::TokioProcessRunner::new()),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(forge_domain::Redactor::new())),
        vcs: None,
        logger: Arc::new(NoopLogger),
        metrics: Arc::new(NoopMetrics),
        clock: Arc::new(SystemClock::new()),
        ids: Arc::new(UuidV7Ids::new()),
    }
}
