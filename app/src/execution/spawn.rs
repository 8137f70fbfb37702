//! Step two, spawn: the provider's invocation, confined; the run's secrets for the
//! redactor; the child; and, for a CLI that holds a conversation (ACP), its session with
//! the opening lines written.

use std::sync::Arc;
use std::time::Duration;

use forge_domain::permission::PermissionOwner;
use forge_domain::{EventAccumulator, ExecutionResult, ForgeError, PermissionMode, Redactor};
use forge_ports::{Invocation, PermissionAsker, RunningProcess, SessionServices, SpawnOptions};
use futures::stream::FuturesUnordered;
use tokio::time::Instant;

use super::decoding::Decoding;
use super::prepare::Prepared;
use super::pump::RunLoop;
use super::stopping::write_lines;
use crate::runtime::Runtime;

/// Starts the CLI; a failure still finishes the bundle, and is the result.
pub(super) async fn spawn<'a>(
    rt: &Runtime,
    mut prepared: Prepared<'a>,
) -> Result<(RunLoop<'a>, Box<dyn RunningProcess>), ExecutionResult> {
    let provider = Arc::clone(&prepared.plan.provider);
    let permissions = match asker(rt, &prepared) {
        Ok(asker) => asker,
        Err(e) => return Err(prepared.fail(rt, e).await),
    };
    let invocation = match provider.invocation(&prepared.plan.request, &prepared.ctx) {
        Ok(inv) => crate::confine::agent(
            inv,
            &prepared.plan.request,
            &prepared.ctx,
            provider.id().as_str(),
        ),
        Err(e) => return Err(prepared.fail(rt, e).await),
    };
    let redactor = run_redactor(&prepared, &invocation);
    let options = SpawnOptions {
        max_line_bytes: prepared.plan.max_line_bytes,
        stdout_log: Some(prepared.delivery.bundle.stdout_log()),
        stderr_log: Some(prepared.delivery.bundle.stderr_log()),
        redactor: redactor.clone(),
        run_marker: Some(prepared.plan.run_id.as_str().to_owned()),
        ..SpawnOptions::default()
    };
    let mut child = match rt.runner.spawn(invocation, options).await {
        Ok(c) => c,
        Err(e) => return Err(prepared.fail(rt, e).await),
    };
    prepared.record.pid = child.pid();

    // A CLI that holds a conversation (ACP) gets its session: the opening lines now, an
    // answer to every stdout line before the line is decoded.
    let services = SessionServices {
        workspace: Arc::clone(&rt.workspace),
        runner: Arc::clone(&rt.runner),
        workdir: prepared.workdir.clone(),
        ladder: prepared.plan.ladder,
        permissions,
    };
    let mut session = provider.session(&prepared.plan.request, &prepared.ctx, services);
    let mut stdin = match &session {
        Some(_) => child.take_stdin(),
        None => None,
    };
    let mut early_errors = Vec::new();
    if let Some(session) = session.as_mut() {
        write_lines(&mut stdin, session.opening(), &mut early_errors).await;
    }

    let decoding = Decoding {
        decoder: provider.decoder(&prepared.plan.request),
        raw_events: Vec::new(),
        runtime_errors: early_errors,
        batch: Vec::new(),
        max_line_bytes: prepared.plan.max_line_bytes,
        provider: provider.id(),
        metrics: Arc::clone(&rt.metrics),
        burst_bytes: 0,
    };
    // stderr line by line when the runner offers it, so what a CLI reports only there
    // (gemini's retries) is an event when it happens, not after the run.
    let stderr_lines = child.take_stderr_lines();
    // What the sandbox refuses the agent (a connection its egress refused): an event when
    // it happens, and a line of the result.
    let denials = child.take_sandbox_denials();
    let deadline = prepared
        .plan
        .timeout_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let run = RunLoop {
        killer: child.killer(),
        redactor,
        session,
        stdin,
        conversation_over: false,
        later: FuturesUnordered::new(),
        session_calls: EventAccumulator::new(),
        decoding,
        stderr_open: stderr_lines.is_some(),
        stderr_lines,
        denials_open: denials.is_some(),
        denials,
        sandbox_denied: Vec::new(),
        deadline,
        stop: None,
        killed: false,
        shutdown_task: None,
        prepared,
    };
    Ok((run, child))
}

/// Where the agent's permission requests go in `--permission-mode ask` (`None` in any other
/// mode). A run that asks with nowhere to ask is refused, never run without asking.
fn asker(
    rt: &Runtime,
    prepared: &Prepared<'_>,
) -> Result<Option<Arc<dyn PermissionAsker>>, ForgeError> {
    let plan = &prepared.plan;
    if plan.request.permission_mode != Some(PermissionMode::Ask) {
        return Ok(None);
    }
    let Some(bridge) = &plan.permissions else {
        return Err(ForgeError::InvalidRequest {
            reason: "--permission-mode ask: this forge has no permission store to ask through"
                .to_owned(),
        });
    };
    let owner = bridge
        .owner
        .clone()
        .unwrap_or_else(|| PermissionOwner::Run(plan.run_id.clone()));
    let asker = bridge.asker(
        owner,
        plan.provider.id(),
        prepared.workdir.display().to_string(),
        Arc::clone(&rt.ids),
    );
    Ok(Some(Arc::new(asker)))
}

/// The plan's redactor, with this run's own secrets: the invocation's and the request's
/// environment and the tool server's bearer token.
fn run_redactor(prepared: &Prepared<'_>, invocation: &Invocation) -> Redactor {
    prepared
        .plan
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
            prepared
                .plan
                .request
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .with_secrets(prepared.ctx.mcp.iter().map(|m| m.bearer_token.clone()))
}
