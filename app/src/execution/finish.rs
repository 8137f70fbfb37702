//! Step four, finish: end what the run started (the session, the ladder, the child, the
//! tool server), read what is left (stderr, refusals), say why forge stopped the run,
//! assemble the result and close the bundle with it.

use forge_domain::{AgentEvent, EndedOrphan, ExecutionResult, ForgeError, Redactor, ToolExecution};
use forge_ports::{ProcessExit, RunArtifacts, RunRecord, RunningProcess};

use futures::FutureExt;

use super::pump::RunLoop;
use super::stopping::Stop;
use crate::assemble::{AssembleInputs, assemble_result};
use crate::handle::RunCanceller;
use crate::runtime::Runtime;

/// How the child and the tool server ended.
struct Ended {
    exit: Option<ProcessExit>,
    orphans_ended: Vec<EndedOrphan>,
    tool_record: Vec<ToolExecution>,
}

/// Why forge ended the run, if it did: a cancel wins races (one that arrived while the
/// child was ending still counts).
struct Stopped {
    cancelled: bool,
    timed_out_after_ms: Option<u64>,
}

impl RunLoop<'_> {
    /// Ends the run and returns its result (also written to the bundle).
    pub async fn finish(
        mut self,
        child: Box<dyn RunningProcess>,
        rt: &Runtime,
        canceller: &RunCanceller,
        started_mono: u64,
    ) -> ExecutionResult {
        let ended = self.end_processes(child).await;
        let stopped = self.read_the_rest(ended.exit.as_ref(), canceller).await;

        let mut pieces = self.decoding.decoder.finish(ended.exit.as_ref());
        pieces.tool_calls.append(&mut self.session_calls.tool_calls);
        let duration_ms = rt.clock.monotonic_ms().saturating_sub(started_mono);
        let plan = &self.prepared.plan;
        let mut result = assemble_result(
            pieces,
            AssembleInputs {
                provider: plan.provider.id(),
                run_id: Some(plan.run_id.clone()),
                workdir: Some(self.prepared.workdir.display().to_string()),
                raw_events: std::mem::take(&mut self.decoding.raw_events),
                runtime_errors: std::mem::take(&mut self.decoding.runtime_errors),
                exit: ended.exit,
                cancelled: stopped.cancelled,
                timed_out_after_ms: stopped.timed_out_after_ms,
                duration_ms: Some(duration_ms),
            },
        );
        crate::tools::merge_tool_record(&mut result, ended.tool_record);
        result.metadata.orphans_ended = ended.orphans_ended;
        result.metadata.sandbox = rt.runner.sandbox();
        result.metadata.sandbox_denied = std::mem::take(&mut self.sandbox_denied);
        result
            .metadata
            .rate_limit_waits
            .clone_from(&plan.rate_limit_waits);
        let prepared = &mut self.prepared;
        finish_bundle(
            rt,
            &mut prepared.record,
            prepared.delivery.bundle.as_mut(),
            result,
            &self.redactor,
        )
        .await
    }

    /// What the session started for the agent (its commands), the ladder, the child and
    /// the tool server end with the run.
    async fn end_processes(&mut self, mut child: Box<dyn RunningProcess>) -> Ended {
        let errors = &mut self.decoding.runtime_errors;
        self.later = futures::stream::FuturesUnordered::new();
        if let Some(session) = self.session.as_mut()
            && let Err(e) = session.end().await
        {
            errors.push(e);
        }
        if let Some(task) = self.shutdown_task.take() {
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(e),
                Err(e) => errors.push(ForgeError::io("kill ladder task", e)),
            }
        }
        self.stdin = None;
        let exit = match child.wait().await {
            // An agent ended by forge after the conversation was over: how it left says
            // nothing about the run (its answer does).
            Ok(mut exit) if self.conversation_over && exit.code != Some(0) => {
                exit.code = None;
                exit.signal = None;
                Some(exit)
            }
            Ok(exit) => Some(exit),
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let orphans_ended = child.ended_orphans();
        for orphan in &orphans_ended {
            self.prepared
                .delivery
                .log
                .warn(&crate::orphans::describe(orphan));
        }
        drop(child);
        let tool_record = match self.prepared.tool_server.take() {
            Some(server) => server.stop().await.unwrap_or_else(|e| {
                errors.push(e);
                Vec::new()
            }),
            None => Vec::new(),
        };
        Ended {
            exit,
            orphans_ended,
            tool_record,
        }
    }

    /// What the CLI said only on stderr (retries), in order before forge's own ending: the
    /// lines not read yet (all of stderr is in once the child was waited for), or, from a
    /// runner without live lines, the kept tail. Then the refusals not read yet (the egress
    /// point stopped when the child was waited for), and why forge stopped the run.
    async fn read_the_rest(
        &mut self,
        exit: Option<&ProcessExit>,
        canceller: &RunCanceller,
    ) -> Stopped {
        let decoding = &mut self.decoding;
        match self.stderr_lines.as_mut() {
            Some(lines) => {
                while let Some(Some(line)) = lines.next_line().now_or_never() {
                    decoding
                        .decoder
                        .decode_stderr_line(&line, &mut decoding.batch);
                }
            }
            None => {
                if let Some(exit) = exit {
                    decoding
                        .decoder
                        .decode_stderr(&exit.stderr_tail, &mut decoding.batch);
                }
            }
        }
        if let Some(denials) = self.denials.as_mut() {
            while let Some(Some(denial)) = denials.next_denial().now_or_never() {
                decoding.batch.push(denial.event());
                self.sandbox_denied.push(denial);
            }
        }
        let cancelled = self.stop == Some(Stop::Cancelled) || canceller.is_cancelled();
        let timed_out_after_ms = (!cancelled && self.stop == Some(Stop::TimedOut))
            .then_some(self.prepared.plan.timeout_ms.unwrap_or(0));
        if cancelled {
            decoding.batch.push(AgentEvent::Error {
                message: "run cancelled".into(),
                code: Some("cancelled".into()),
            });
        } else if let Some(ms) = timed_out_after_ms {
            decoding.batch.push(AgentEvent::Error {
                message: format!("timed out after {ms} ms"),
                code: Some("timeout".into()),
            });
        }
        self.deliver().await;
        if let Some(e) = self.prepared.delivery.artifact_error.take() {
            self.decoding.runtime_errors.push(e);
        }
        Stopped {
            cancelled,
            timed_out_after_ms,
        }
    }
}

/// Closes the bundle with the result (masked with the run's secrets when it holds any).
pub(super) async fn finish_bundle(
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
