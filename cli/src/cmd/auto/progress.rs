//! One stderr line per loop event while the loop runs (human mode), on top of the store.

use std::io::Write;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::autoloop::{LoopEvent, LoopEventKind, LoopReport, LoopState};
use forge_ports::LoopStore;

pub struct Progress<S> {
    pub inner: S,
}

#[async_trait]
impl<S: LoopStore> LoopStore for Progress<S> {
    async fn load_state(&self) -> Result<Option<LoopState>, ForgeError> {
        self.inner.load_state().await
    }

    async fn save_state(&self, state: &LoopState) -> Result<(), ForgeError> {
        self.inner.save_state(state).await
    }

    async fn append_events(&self, events: &[LoopEvent]) -> Result<(), ForgeError> {
        self.inner.append_events(events).await?;
        let mut err = std::io::stderr().lock();
        for event in events {
            let _ = writeln!(
                err,
                "auto: iteration {}: {}",
                event.iteration,
                line(&event.kind)
            );
        }
        Ok(())
    }

    async fn write_report(&self, report: &LoopReport, markdown: &str) -> Result<(), ForgeError> {
        self.inner.write_report(report, markdown).await
    }
}

fn line(kind: &LoopEventKind) -> String {
    match kind {
        LoopEventKind::IterationStarted => "started".into(),
        LoopEventKind::Planned {
            task,
            done: true,
            reason,
            ..
        } if task.is_empty() => {
            format!("done ({reason})")
        }
        LoopEventKind::Planned { task, source, .. } => format!("next task ({source}): {task}"),
        LoopEventKind::PersonaSwitched { from, to } => format!("persona {from} → {to}"),
        LoopEventKind::ResearchHit { query } => format!("research (cached): {query}"),
        LoopEventKind::ResearchMiss { query } => format!("researched: {query}"),
        LoopEventKind::Executed {
            status,
            cost_usd,
            duration_ms,
            ..
        } => {
            format!("executed: {status}, ${cost_usd:.4}, {duration_ms} ms")
        }
        LoopEventKind::Error { step, reason } => format!("error in {step}: {reason}"),
        LoopEventKind::Stopped { reason } => format!("stopped: {reason}"),
        LoopEventKind::Resumed { step } => format!("resumed at {step}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::autoloop::StopReason;

    #[test]
    fn one_line_per_event_kind() {
        let planned = |task: &str, done| LoopEventKind::Planned {
            task: task.into(),
            done,
            reason: "because".into(),
            source: "planner".into(),
        };
        let cases = [
            (LoopEventKind::IterationStarted, "started"),
            (
                planned("write a.txt", false),
                "next task (planner): write a.txt",
            ),
            (planned("", true), "done (because)"),
            // done with a task still named is shown as the plan it is.
            (planned("tidy up", true), "next task (planner): tidy up"),
            (
                LoopEventKind::Executed {
                    status: "success".into(),
                    cost_usd: 0.0123,
                    duration_ms: 900,
                },
                "executed: success, $0.0123, 900 ms",
            ),
            (
                LoopEventKind::Stopped {
                    reason: StopReason::EmergencyStop,
                },
                "stopped: emergency_stop",
            ),
        ];
        for (kind, want) in cases {
            assert_eq!(line(&kind), want);
        }
    }
}
