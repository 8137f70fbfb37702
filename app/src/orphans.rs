//! Processes that outlived their run outside its process group: ended by the runner, told
//! in the log (and, for a run's own, in its result's metadata).

use forge_domain::EndedOrphan;

use crate::agent::CodeAgent;

/// One log line for an ended orphan.
pub fn describe(orphan: &EndedOrphan) -> String {
    let how = orphan
        .ended_by
        .as_deref()
        .unwrap_or("nothing (already gone)");
    format!(
        "process {} ({}) of run {} had left the run's process group and outlived it; ended by {how}",
        orphan.pid, orphan.command, orphan.run_id
    )
}

impl CodeAgent {
    /// At start-up: ends what runs of forges that are gone left behind outside their process
    /// groups (the lifeline watchdog only reaches the group), and logs each one.
    pub async fn end_orphans_of_finished_runs(&self) -> Vec<EndedOrphan> {
        let runtime = self.runtime();
        let ended = runtime.runner.end_orphans_of_finished_runs().await;
        for orphan in &ended {
            runtime.logger.warn(&describe(orphan));
        }
        ended
    }
}
