//! One run, start to finish: workspace, bundle, invocation, supervised child, decoding,
//! cancel and timeout, result. The single code path behind `run` and `stream`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use forge_domain::sandbox::SandboxDenial;
use forge_domain::{
    AgentEvent, EventAccumulator, ExecutionRequest, ExecutionResult, ExecutionStatus, ForgeError,
    RawJson, Redactor, RunId,
};
use forge_ports::{
    AgentSession, InvocationContext, KillLadder, ProcessKiller, Provider, RegisteredTool,
    RunArtifacts, RunLogger, RunRecord, SessionServices, SpawnOptions, StdinWriter, StdoutItem,
    ToolHost, ToolRun,
};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::assemble::{AssembleInputs, assemble_result};
use crate::handle::RunCanceller;
use crate::runtime::Runtime;

/// Everything decided before a run starts.
#[derive(Clone)]
pub(crate) struct RunPlan {
    pub provider: Arc<dyn Provider>,
    pub request: ExecutionRequest,
    pub run_id: RunId,
    pub timeout_ms: Option<u64>,
    pub ladder: KillLadder,
    pub max_line_bytes: usize,
    pub redactor: Redactor,
    /// The tool host and the tools it serves to this run, when any are registered.
    pub tools: Option<RunTools>,
    pub on_rate_limit: forge_domain::OnRateLimit,
    /// Limits waited out before this run (it resumes the session that hit them).
    pub rate_limit_waits: Vec<forge_domain::RateLimitWait>,
}

/// The tool host and the registered tools of a run.
pub(crate) type RunTools = (Arc<dyn ToolHost>, Arc<[RegisteredTool]>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    TimedOut,
}

/// Where decoded events go: the bundle, the log, and the live stream if anyone listens.
struct Delivery<'a> {
    bundle: &'a mut dyn RunArtifacts,
    log: &'a dyn RunLogger,
    sink: Option<mpsc::Sender<AgentEvent>>,
    artifact_error: Option<ForgeError>,
}

impl Delivery<'_> {
    async fn deliver(&mut self, batch: &mut Vec<AgentEvent>) {
        if batch.is_empty() {
            return;
        }
        if let Err(e) = self.bundle.append_events(batch).await {
            self.artifact_error.get_or_insert(e);
        }
        for event in batch.iter() {
            self.log.event(event);
        }
        if let Some(sink) = &self.sink {
            for event in batch.drain(..) {
                if sink.send(event).await.is_err() {
                    // The reader went away; the run goes on and keeps its result.
                    self.sink = None;
                    break;
                }
            }
        }
        batch.clear();
    }
}

/// Most stdout lines decoded before the events are delivered (bounds latency and memory).
const MAX_BURST_LINES: usize = 512;

/// Most stdout bytes decoded before the events are delivered: a huge line's events go out
/// (and are dropped) before the next line is decoded, so a text that more text joins is
/// moved, not copied, while its event still holds it.
const MAX_BURST_BYTES: usize = 1024 * 1024;

/// Per-line work: keep the raw line, decode it, record parse errors.
struct LineState<'a> {
    decoder: &'a mut dyn forge_ports::Decoder,
    raw_events: &'a mut Vec<RawJson>,
    runtime_errors: &'a mut Vec<ForgeError>,
    batch: &'a mut Vec<AgentEvent>,
    max_line_bytes: usize,
    provider: &'a forge_domain::ProviderId,
    metrics: &'a dyn forge_ports::Metrics,
    /// Bytes of the lines taken since the last delivery.
    burst_bytes: usize,
}

impl LineState<'_> {
    /// Handles one stdout item; false when the stream has ended.
    fn take(&mut self, item: Result<Option<StdoutItem>, ForgeError>) -> bool {
        match item {
            Ok(Some(StdoutItem::Line { line_no, text })) => {
                self.burst_bytes += text.len();
                // The decoder says whether the line was blank (kept nowhere) or one JSON
                // document (kept without a second syntax pass). Its shape is unknown only after an error.
                match self.decoder.decode_line(line_no, &text, self.batch) {
                    // The line itself is moved into the result: a huge line lives once
                    // beside its decoded text, never twice.
                    Ok(shape) => self.raw_events.extend(shape.raw_line_owned(text)),
                    Err(e) => {
                        self.raw_events.push(RawJson::from_line(&text));
                        self.metrics.parse_error(self.provider);
                        self.runtime_errors.push(e);
                    }
                }
                true
            }
            Ok(Some(StdoutItem::Oversize {
                line_no,
                size_bytes,
                prefix,
            })) => {
                let cap = self.max_line_bytes;
                self.raw_events.push(RawJson::string(&format!(
                    "<line {line_no} of {size_bytes} bytes skipped: over the {cap} byte cap; full text in stdout.log>"
                )));
                self.runtime_errors.push(ForgeError::parsing(
                    line_no,
                    &prefix,
                    format!("line of {size_bytes} bytes is over the {cap} byte cap"),
                ));
                self.metrics.parse_error(self.provider);
                self.batch
                    .push(AgentEvent::OversizeLine { size_bytes, prefix });
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.runtime_errors.push(e);
                false
            }
        }
    }
}

/// Writes a session's lines to the agent; a failed write (the agent is gone) is kept and
/// closes stdin.
async fn write_lines(
    stdin: &mut Option<Box<dyn StdinWriter>>,
    lines: Vec<String>,
    errors: &mut Vec<ForgeError>,
) {
    for line in lines {
        let Some(pipe) = stdin.as_mut() else {
            return;
        };
        if let Err(e) = pipe.write_line(&line).await {
            errors.push(e);
            *stdin = None;
        }
    }
}

/// Cancel or timeout: a conversing agent is asked to stop first (its answer still arrives)
/// and the ladder waits the interrupt grace; any other CLI gets the ladder at once.
async fn ask_to_stop(
    session: Option<&mut (dyn AgentSession + 'static)>,
    stdin: &mut Option<Box<dyn StdinWriter>>,
    errors: &mut Vec<ForgeError>,
    ladder: KillLadder,
) -> Duration {
    match session {
        Some(session) if stdin.is_some() => {
            write_lines(stdin, session.cancel(), errors).await;
            ladder.interrupt_grace
        }
        _ => Duration::ZERO,
    }
}

/// The kill ladder on the child's group after `grace` (returns at once if it has exited).
fn shutdown_after(
    killer: &Arc<dyn ProcessKiller>,
    grace: Duration,
    ladder: KillLadder,
) -> tokio::task::JoinHandle<Result<(), ForgeError>> {
    let killer = Arc::clone(killer);
    tokio::spawn(async move {
        if !grace.is_zero() {
            tokio::time::sleep(grace).await;
        }
        killer.shutdown(ladder).await
    })
}

/// The next live stderr line; `None` when there is none to wait for.
async fn next_stderr_line(lines: &mut Option<Box<dyn forge_ports::StderrLines>>) -> Option<String> {
    match lines {
        Some(lines) => lines.next_line().await,
        None => None,
    }
}

async fn next_denial(
    denials: &mut Option<Box<dyn forge_ports::SandboxDenials>>,
) -> Option<SandboxDenial> {
    match denials {
        Some(denials) => denials.next_denial().await,
        None => None,
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

pub(crate) async fn execute(
    rt: Runtime,
    plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    canceller: RunCanceller,
) -> ExecutionResult {
    let provider_id = plan.provider.id();
    let started_mono = rt.clock.monotonic_ms();
    let log = rt.logger.run(&plan.run_id, &provider_id);
    rt.metrics.execution_started(&provider_id);

    let result = crate::rate_limit::waiting_out_limits(
        &rt,
        plan,
        sink,
        &canceller,
        log.as_ref(),
        started_mono,
    )
    .await;

    let duration = Duration::from_millis(rt.clock.monotonic_ms().saturating_sub(started_mono));
    rt.metrics.execution_finished(
        &provider_id,
        result.status,
        duration,
        result.timed_out(),
        result.was_cancelled(),
    );
    log.finished(&result);
    result
}

fn failed(plan: &RunPlan, workdir: Option<&PathBuf>, error: ForgeError) -> ExecutionResult {
    let mut result = ExecutionResult::empty(plan.provider.id(), ExecutionStatus::Error);
    result.metadata.run_id = Some(plan.run_id.clone());
    result.metadata.workdir = workdir.map(|w| w.display().to_string());
    result.errors.push(error);
    result
}

pub(crate) async fn execute_inner(
    rt: &Runtime,
    mut plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    canceller: &RunCanceller,
    log: &dyn RunLogger,
    started_mono: u64,
) -> ExecutionResult {
    let provider = Arc::clone(&plan.provider);
    let settings = provider.settings().clone();

    // Without a usable workspace there is nowhere to put a bundle: report and stop.
    let workdir = match rt.workspace.open(&plan.request.workdir).await {
        Ok(w) => w,
        Err(e) => return failed(&plan, Some(&plan.request.workdir), e),
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
        provider: provider.id(),
        workdir: workdir.clone(),
        home: None,
        started_at_ms: rt.clock.now_ms(),
        finished_at_ms: None,
        session_id: plan.request.resume_session_id.clone(),
        status: None,
        pid: None,
    };
    let mut bundle = match rt.artifacts.create_run(&record, &plan.request).await {
        Ok(b) => b,
        Err(e) => return failed(&plan, Some(&workdir), e),
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
    let mut ctx = InvocationContext {
        run_id: plan.run_id.clone(),
        run_dir: bundle.dir().to_path_buf(),
        home,
        in_repository,
        resumed_usage: None,
        mcp: None,
    };

    let mut delivery = Delivery {
        bundle: bundle.as_mut(),
        log,
        sink,
        artifact_error: None,
    };
    // A run resumed after a rate-limit wait opens its bundle with that wait (the live stream
    // and the log had the event when the wait began; the limited run's bundle was closed).
    if let Some(wait) = plan.rate_limit_waits.last() {
        let event = AgentEvent::RateLimitWait {
            resets_at_ms: wait.resets_at_ms,
            wait_ms: wait.waited_ms,
            message: wait.message.clone(),
        };
        if let Err(e) = delivery.bundle.append_events(&[event]).await {
            delivery.artifact_error.get_or_insert(e);
        }
    }

    // The run's tool server: up before the CLI starts, stopped after it ends (dropping it on
    // an early return stops it too).
    let mut tool_server = None;
    if let Some((host, tools)) = &plan.tools {
        let run = ToolRun {
            run_id: plan.run_id.clone(),
            workspace_root: workdir.clone(),
            workspace: Arc::clone(&rt.workspace),
            tools: Arc::clone(tools),
        };
        match host.start(run).await {
            Ok(server) => {
                ctx.mcp = Some(server.endpoint().clone());
                tool_server = Some(server);
            }
            Err(e) => {
                return finish_failed(rt, &plan, &mut record, &mut delivery, &workdir, e).await;
            }
        }
    }

    let invocation = match provider.invocation(&plan.request, &ctx) {
        Ok(inv) => crate::confine::agent(inv, &plan.request, &ctx, provider.id().as_str()),
        Err(e) => return finish_failed(rt, &plan, &mut record, &mut delivery, &workdir, e).await,
    };
    let redactor = plan
        .redactor
        .clone()
        .with_secret_env(
            invocation
                .env
                .set
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .with_secret_env(
            plan.request
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .with_secrets(ctx.mcp.iter().map(|m| m.bearer_token.clone()));
    let options = SpawnOptions {
        max_line_bytes: plan.max_line_bytes,
        stdout_log: Some(delivery.bundle.stdout_log()),
        stderr_log: Some(delivery.bundle.stderr_log()),
        redactor: redactor.clone(),
        run_marker: Some(plan.run_id.as_str().to_owned()),
        ..SpawnOptions::default()
    };
    let mut child = match rt.runner.spawn(invocation, options).await {
        Ok(c) => c,
        Err(e) => return finish_failed(rt, &plan, &mut record, &mut delivery, &workdir, e).await,
    };
    record.pid = child.pid();

    // A CLI that holds a conversation (ACP) gets its session: the opening lines now, an
    // answer to every stdout line before the line is decoded.
    let services = SessionServices {
        workspace: Arc::clone(&rt.workspace),
        runner: Arc::clone(&rt.runner),
        workdir: workdir.clone(),
        ladder: plan.ladder,
    };
    let mut session = provider.session(&plan.request, &ctx, services);
    let mut stdin = match &session {
        Some(_) => child.take_stdin(),
        None => None,
    };
    let mut early_errors = Vec::new();
    if let Some(session) = session.as_mut() {
        write_lines(&mut stdin, session.opening(), &mut early_errors).await;
    }
    let mut conversation_over = false;
    let mut later = FuturesUnordered::new();
    // The tool calls the session records itself (commands it ran for the agent), for the
    // result beside the decoder's.
    let mut session_calls = EventAccumulator::new();

    let mut decoder = provider.decoder(&plan.request);
    // stderr line by line when the runner offers it, so what a CLI reports only there
    // (gemini's retries) is an event when it happens, not after the run.
    let mut stderr_lines = child.take_stderr_lines();
    let mut stderr_open = stderr_lines.is_some();
    // What the sandbox refuses the agent (a connection its egress refused): an event when
    // it happens, and a line of the result.
    let mut denials = child.take_sandbox_denials();
    let mut denials_open = denials.is_some();
    let mut sandbox_denied: Vec<SandboxDenial> = Vec::new();
    let provider_id_for_metrics = provider.id();
    let killer = child.killer();
    let deadline = plan
        .timeout_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let mut stop: Option<Stop> = None;
    let mut killed = false;
    let mut shutdown_task = None;
    let mut raw_events: Vec<RawJson> = Vec::new();
    let mut runtime_errors: Vec<ForgeError> = early_errors;
    let mut batch: Vec<AgentEvent> = Vec::new();

    let mut line_state = LineState {
        decoder: decoder.as_mut(),
        raw_events: &mut raw_events,
        runtime_errors: &mut runtime_errors,
        batch: &mut batch,
        max_line_bytes: plan.max_line_bytes,
        provider: &provider_id_for_metrics,
        metrics: rt.metrics.as_ref(),
        burst_bytes: 0,
    };
    loop {
        let (step, item) = tokio::select! {
            biased;
            () = canceller.kill.cancelled(), if !killed => {
                killer.kill_now();
                killed = true;
                stop.get_or_insert(Stop::Cancelled);
                continue;
            }
            () = canceller.cancel.cancelled(), if stop.is_none() => {
                stop = Some(Stop::Cancelled);
                let grace = ask_to_stop(session.as_deref_mut(), &mut stdin, line_state.runtime_errors, plan.ladder).await;
                shutdown_task.get_or_insert_with(|| shutdown_after(&killer, grace, plan.ladder));
                continue;
            }
            () = sleep_until_opt(deadline), if stop.is_none() && deadline.is_some() => {
                stop = Some(Stop::TimedOut);
                let grace = ask_to_stop(session.as_deref_mut(), &mut stdin, line_state.runtime_errors, plan.ladder).await;
                shutdown_task.get_or_insert_with(|| shutdown_after(&killer, grace, plan.ladder));
                continue;
            }
            line = next_stderr_line(&mut stderr_lines), if stderr_open => {
                match line {
                    Some(line) => {
                        line_state.decoder.decode_stderr_line(&line, line_state.batch);
                        delivery.deliver(line_state.batch).await;
                    }
                    None => stderr_open = false,
                }
                continue;
            }
            denial = next_denial(&mut denials), if denials_open => {
                match denial {
                    Some(denial) => {
                        line_state.batch.push(denial.event());
                        sandbox_denied.push(denial);
                        delivery.deliver(line_state.batch).await;
                    }
                    None => denials_open = false,
                }
                continue;
            }
            // A step the session finishes later (an answer that waited for a command).
            Some(step) = later.next(), if !later.is_empty() => (Some(step), None),
            item = child.next_stdout() => {
                let step = match (session.as_mut(), &item) {
                    (Some(session), Ok(Some(StdoutItem::Line { text, .. }))) => {
                        Some(session.on_line(text).await)
                    }
                    _ => None,
                };
                (step, Some(item))
            }
        };
        if let Some(mut step) = step {
            later.extend(step.later.drain(..));
            write_lines(&mut stdin, step.send, line_state.runtime_errors).await;
            step.events.iter().for_each(|e| session_calls.observe(e));
            line_state.batch.extend(step.events);
            line_state.runtime_errors.extend(step.errors);
            if step.done && !conversation_over {
                // The agent is a server: once its answer is in, it gets the grace to finish
                // its own writes (gemini 0.61 saves the session's last messages after
                // answering: closing stdin at once loses them, and the session cannot be
                // loaded), then stdin is closed and, after another grace, the ladder.
                conversation_over = true;
                let pipe = stdin.take();
                let grace = plan.ladder.interrupt_grace;
                let ladder = plan.ladder;
                let killer = Arc::clone(&killer);
                shutdown_task.get_or_insert_with(|| {
                    tokio::spawn(async move {
                        tokio::time::sleep(grace).await;
                        drop(pipe);
                        tokio::time::sleep(grace).await;
                        killer.shutdown(ladder).await
                    })
                });
            }
        }
        let Some(item) = item else {
            delivery.deliver(line_state.batch).await;
            continue;
        };
        let mut ended = !line_state.take(item);
        // Decode whatever is already waiting before delivering: one bundle write and one
        // wake-up of the reader per burst instead of per line. `next_stdout` is cancel-safe,
        // so polling it once and dropping the future loses nothing.
        let mut burst = 1;
        // A session answers line by line, so its lines are not read ahead.
        while !ended
            && session.is_none()
            && burst < MAX_BURST_LINES
            && line_state.burst_bytes < MAX_BURST_BYTES
        {
            match child.next_stdout().now_or_never() {
                Some(item) => ended = !line_state.take(item),
                None => break,
            }
            burst += 1;
        }
        delivery.deliver(line_state.batch).await;
        line_state.burst_bytes = 0;
        if ended {
            break;
        }
    }

    // What the session started for the agent (its commands) ends with the run.
    drop(later);
    if let Some(session) = session.as_mut()
        && let Err(e) = session.end().await
    {
        runtime_errors.push(e);
    }
    if let Some(task) = shutdown_task {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => runtime_errors.push(e),
            Err(e) => runtime_errors.push(ForgeError::io("kill ladder task", e)),
        }
    }
    drop(stdin);
    let exit = match child.wait().await {
        // An agent ended by forge after the conversation was over: how it left says
        // nothing about the run (its answer does).
        Ok(mut exit) if conversation_over && exit.code != Some(0) => {
            exit.code = None;
            exit.signal = None;
            Some(exit)
        }
        Ok(exit) => Some(exit),
        Err(e) => {
            runtime_errors.push(e);
            None
        }
    };
    let orphans_ended = child.ended_orphans();
    for orphan in &orphans_ended {
        log.warn(&crate::orphans::describe(orphan));
    }
    drop(child);
    let tool_record = match tool_server.take() {
        Some(server) => match server.stop().await {
            Ok(record) => record,
            Err(e) => {
                runtime_errors.push(e);
                Vec::new()
            }
        },
        None => Vec::new(),
    };

    // What the CLI said only on stderr (retries), in order before forge's own ending: the
    // lines not read yet (all of stderr is in once the child was waited for), or, from a
    // runner without live lines, the kept tail.
    match stderr_lines.as_mut() {
        Some(lines) => {
            while let Some(Some(line)) = lines.next_line().now_or_never() {
                decoder.decode_stderr_line(&line, &mut batch);
            }
        }
        None => {
            if let Some(exit) = &exit {
                decoder.decode_stderr(&exit.stderr_tail, &mut batch);
            }
        }
    }
    // Refusals not read yet: the egress point stopped when the child was waited for.
    if let Some(denials) = denials.as_mut() {
        while let Some(Some(denial)) = denials.next_denial().now_or_never() {
            batch.push(denial.event());
            sandbox_denied.push(denial);
        }
    }
    // Cancel wins races: a cancel that arrived while the child was ending still counts.
    let cancelled = stop == Some(Stop::Cancelled) || canceller.is_cancelled();
    let timed_out_after_ms =
        (!cancelled && stop == Some(Stop::TimedOut)).then_some(plan.timeout_ms.unwrap_or(0));
    if cancelled {
        batch.push(AgentEvent::Error {
            message: "run cancelled".into(),
            code: Some("cancelled".into()),
        });
    } else if let Some(ms) = timed_out_after_ms {
        batch.push(AgentEvent::Error {
            message: format!("timed out after {ms} ms"),
            code: Some("timeout".into()),
        });
    }
    delivery.deliver(&mut batch).await;
    if let Some(e) = delivery.artifact_error.take() {
        runtime_errors.push(e);
    }

    let mut pieces = decoder.finish(exit.as_ref());
    pieces.tool_calls.append(&mut session_calls.tool_calls);
    let duration_ms = rt.clock.monotonic_ms().saturating_sub(started_mono);
    let mut result = assemble_result(
        pieces,
        AssembleInputs {
            provider: provider.id(),
            run_id: Some(plan.run_id.clone()),
            workdir: Some(workdir.display().to_string()),
            raw_events,
            runtime_errors,
            exit,
            cancelled,
            timed_out_after_ms,
            duration_ms: Some(duration_ms),
        },
    );
    crate::tools::merge_tool_record(&mut result, tool_record);
    result.metadata.orphans_ended = orphans_ended;
    result.metadata.sandbox = rt.runner.sandbox();
    result.metadata.sandbox_denied = sandbox_denied;
    result
        .metadata
        .rate_limit_waits
        .clone_from(&plan.rate_limit_waits);
    finish_bundle(rt, &mut record, delivery.bundle, result, &redactor).await
}

/// A failure after the bundle exists: the bundle still gets its result.
async fn finish_failed(
    rt: &Runtime,
    plan: &RunPlan,
    record: &mut RunRecord,
    delivery: &mut Delivery<'_>,
    workdir: &PathBuf,
    error: ForgeError,
) -> ExecutionResult {
    let mut batch = vec![AgentEvent::Error {
        message: error.to_string(),
        code: Some(error.kind().to_owned()),
    }];
    delivery.deliver(&mut batch).await;
    let mut result = failed(plan, Some(workdir), error);
    result
        .metadata
        .rate_limit_waits
        .clone_from(&plan.rate_limit_waits);
    finish_bundle(rt, record, delivery.bundle, result, &plan.redactor).await
}

async fn finish_bundle(
    rt: &Runtime,
    record: &mut RunRecord,
    bundle: &mut dyn RunArtifacts,
    mut result: ExecutionResult,
    redactor: &Redactor,
) -> ExecutionResult {
    record.finished_at_ms = Some(rt.clock.now_ms());
    record.status = Some(result.status);
    if result.metadata.session_id.is_some() {
        record.session_id.clone_from(&result.metadata.session_id);
    }
    // The masked copy is made only when there is something to mask: a result can hold a
    // line of tens of megabytes, and a copy of it for nothing doubles the run's memory.
    let finished = if redactor.would_redact(&result) {
        let on_disk = redacted(&result, redactor);
        bundle.finish(record, &on_disk).await
    } else {
        bundle.finish(record, &result).await
    };
    if let Err(e) = finished {
        result.errors.push(e);
    }
    result
}

/// The result with this run's secrets masked, for the bundle. Round-trips through JSON text
/// so every string field is covered; falls back to the original if that fails.
fn redacted(result: &ExecutionResult, redactor: &Redactor) -> ExecutionResult {
    let Ok(text) = serde_json::to_string(result) else {
        return result.clone();
    };
    let masked = redactor.redact(&text);
    serde_json::from_str(&masked).unwrap_or_else(|_| result.clone())
}
