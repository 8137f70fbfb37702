//! Reading bundles back: one run, or every run under a workdir.

use std::io::ErrorKind;
use std::path::Path;

use forge_domain::{AgentEvent, ExecutionResult, ForgeError};
use forge_ports::{RunRecord, RunSummary};

use crate::bundle::{EVENTS, RESULT, RUN};

/// What a readable bundle holds, as far as listing needs it.
pub(crate) struct StoredRun {
    pub record: RunRecord,
    pub result: Option<ExecutionResult>,
}

impl StoredRun {
    pub fn summary(&self) -> RunSummary {
        let metadata = self.result.as_ref().map(|r| &r.metadata);
        RunSummary {
            record: self.record.clone(),
            duration_ms: metadata.and_then(|m| m.duration_ms),
            cost_usd: metadata.and_then(|m| m.cost_usd),
            has_result: self.result.is_some(),
        }
    }
}

/// `result.json` of the bundle in `dir`: `None` when there is none.
///
/// # Errors
/// [`ForgeError::Io`] when it exists but cannot be read or parsed.
pub(crate) fn read_result(dir: &Path) -> Result<Option<ExecutionResult>, ForgeError> {
    let path = dir.join(RESULT);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ForgeError::io(format!("reading {}", path.display()), e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ForgeError::io(format!("parsing {}", path.display()), e))
}

/// `events.jsonl` of the bundle in `dir`, skipping lines that do not parse (the last line
/// of a run whose forge died mid-write, or one written by a newer forge).
///
/// # Errors
/// [`ForgeError::Io`] when the file exists but cannot be read.
pub(crate) fn read_events(dir: &Path) -> Result<Vec<AgentEvent>, ForgeError> {
    let path = dir.join(EVENTS);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ForgeError::io(format!("reading {}", path.display()), e)),
    };
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// The bundle in `dir`, or `None` when it cannot be read (no or broken `run.json`).
/// A broken `result.json` counts as no result: the run is still worth listing.
fn read_stored(dir: &Path) -> Option<StoredRun> {
    let text = std::fs::read_to_string(dir.join(RUN)).ok()?;
    let record = serde_json::from_str(&text).ok()?;
    let result = read_result(dir).ok().flatten();
    Some(StoredRun { record, result })
}

/// Every readable bundle in `runs_dir`, newest first (`started_at_ms`, then run id, both
/// descending). A missing `runs_dir` means no runs.
///
/// # Errors
/// [`ForgeError::Io`] when `runs_dir` exists but cannot be listed.
pub(crate) fn read_all(runs_dir: &Path) -> Result<Vec<StoredRun>, ForgeError> {
    let entries = match std::fs::read_dir(runs_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ForgeError::io(format!("listing {}", runs_dir.display()), e)),
    };
    let mut runs: Vec<StoredRun> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|entry| read_stored(&entry.path()))
        .collect();
    runs.sort_by(|a, b| {
        (b.record.started_at_ms, &b.record.run_id).cmp(&(a.record.started_at_ms, &a.record.run_id))
    });
    Ok(runs)
}
