//! Processes that escaped a run's process group and were ended after the run.

use serde::{Deserialize, Serialize};

/// A descendant of a run that had left the run's process group (`setsid`, a daemonising
/// MCP server), found alive by its run marker once the run was over, and ended by forge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndedOrphan {
    pub pid: u32,
    /// The process's command name (`/proc/<pid>/comm`).
    pub command: String,
    /// The run whose marker it carried.
    pub run_id: String,
    /// The signal that ended it (`SIGINT`, `SIGTERM` or `SIGKILL`); `None` when it was gone
    /// before any reached it.
    #[serde(default)]
    pub ended_by: Option<String>,
}
