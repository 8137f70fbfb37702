//! Step one, prepare: the workspace, the run's record and bundle, the home, what the
//! provider is told about the run, and the run's tool server. Nothing runs yet.

use std::path::PathBuf;
use std::sync::Arc;

use forge_domain::{AgentEvent, ExecutionResult, ExecutionStatus, ForgeError};
use forge_ports::{InvocationContext, RunLogger, RunRecord, ToolRun, ToolServer};
use tokio::sync::mpsc;

use super::delivery::Delivery;
use super::finish::finish_bundle;
use crate::run_plan::RunPlan;
use crate::runtime::Runtime;

/// A run with its bundle open, ready to spawn.
pub(super) struct Prepared<'a> {
    pub plan: RunPlan,
    /// The workspace as opened (the request's workdir, resolved).
    pub workdir: PathBuf,
    pub record: RunRecord,
    pub delivery: Delivery<'a>,
    pub ctx: InvocationContext,
    /// Up before the CLI starts, stopped after it ends (dropping it stops it too).
    pub tool_server: Option<Box<dyn ToolServer>>,
}

/// Opens the workspace and the bundle and starts the tool server. Without a usable
/// workspace or bundle there is nowhere to put one: the error is the result.
pub(super) async fn prepare<'a>(
    rt: &Runtime,
    mut plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    log: &'a dyn RunLogger,
) -> Result<Prepared<'a>, ExecutionResult> {
    let settings = plan.provider.settings().clone();
    let workdir = match rt.workspace.open(&plan.request.workdir).await {
        Ok(w) => w,
        Err(e) => return Err(failed(&plan, Some(&plan.request.workdir), e)),
    };
    plan.request.workdir = workdir.clone();

    // A resumed session runs in the home its first run used, or the CLI will not find it.
    let prior = match &plan.request.resume_session_id {
        Some(sid) => rt
            .artifacts
            .find_session(&workdir, sid)
            .await
            .ok()
            .flatten(),
        None => None,
    };

    let mut record = RunRecord {
        run_id: plan.run_id.clone(),
        provider: plan.provider.id(),
        workdir: workdir.clone(),
        home: None,
        started_at_ms: rt.clock.now_ms(),
        finished_at_ms: None,
        session_id: plan.request.resume_session_id.clone(),
        status: None,
        pid: None,
    };
    let bundle = match rt.artifacts.create_run(&record, &plan.request).await {
        Ok(b) => b,
        Err(e) => return Err(failed(&plan, Some(&workdir), e)),
    };
    let home = settings
        .home
        .clone()
        .or_else(|| prior.as_ref().and_then(|p| p.home.clone()))
        .or_else(|| settings.isolate_home.then(|| bundle.dir().join("home")));
    record.home.clone_from(&home);
    log.info(&format!("run started in {}", workdir.display()));

    let in_repository = match &rt.vcs {
        Some(vcs) => vcs.is_repository(&workdir).await.ok(),
        None => None,
    };
    let ctx = InvocationContext {
        run_id: plan.run_id.clone(),
        run_dir: bundle.dir().to_path_buf(),
        home,
        in_repository,
        resumed_usage: None,
        mcp: None,
    };
    let mut prepared = Prepared {
        plan,
        workdir,
        record,
        delivery: Delivery {
            bundle,
            log,
            sink,
            artifact_error: None,
        },
        ctx,
        tool_server: None,
    };
    prepared.record_rate_limit_wait().await;
    match prepared.start_tool_server(rt).await {
        Ok(()) => Ok(prepared),
        Err(e) => Err(prepared.fail(rt, e).await),
    }
}

impl Prepared<'_> {
    /// A run resumed after a rate-limit wait opens its bundle with that wait (the live
    /// stream and the log had the event when the wait began; the limited run's bundle was
    /// closed).
    async fn record_rate_limit_wait(&mut self) {
        let Some(wait) = self.plan.rate_limit_waits.last() else {
            return;
        };
        let event = AgentEvent::RateLimitWait {
            resets_at_ms: wait.resets_at_ms,
            wait_ms: wait.waited_ms,
            message: wait.message.clone(),
        };
        if let Err(e) = self.delivery.bundle.append_events(&[event]).await {
            self.delivery.artifact_error.get_or_insert(e);
        }
    }

    /// The run's tool server, when tools are registered; its endpoint goes to the provider.
    async fn start_tool_server(&mut self, rt: &Runtime) -> Result<(), ForgeError> {
        let Some((host, tools)) = &self.plan.tools else {
            return Ok(());
        };
        let run = ToolRun {
            run_id: self.plan.run_id.clone(),
            workspace_root: self.workdir.clone(),
            workspace: Arc::clone(&rt.workspace),
            tools: Arc::clone(tools),
        };
        let server = host.start(run).await?;
        self.ctx.mcp = Some(server.endpoint().clone());
        self.tool_server = Some(server);
        Ok(())
    }

    /// A failure after the bundle exists: the bundle still gets its result.
    pub async fn fail(mut self, rt: &Runtime, error: ForgeError) -> ExecutionResult {
        let mut batch = vec![AgentEvent::Error {
            message: error.to_string(),
            code: Some(error.kind().to_owned()),
        }];
        self.delivery.deliver(&mut batch).await;
        let mut result = failed(&self.plan, Some(&self.workdir), error);
        result
            .metadata
            .rate_limit_waits
            .clone_from(&self.plan.rate_limit_waits);
        finish_bundle(
            rt,
            &mut self.record,
            self.delivery.bundle.as_mut(),
            result,
            &self.plan.redactor,
        )
        .await
    }
}

/// The result of a run that failed before its CLI started.
fn failed(plan: &RunPlan, workdir: Option<&PathBuf>, error: ForgeError) -> ExecutionResult {
    let mut result = ExecutionResult::empty(plan.provider.id(), ExecutionStatus::Error);
    result.metadata.run_id = Some(plan.run_id.clone());
    result.metadata.workdir = workdir.map(|w| w.display().to_string());
    result.errors.push(error);
    result
}
