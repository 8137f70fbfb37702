//! Runs that are not in memory (finished before a restart, or started by `forge-code-agent
//! run`): read back from their artifact bundle.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_domain::RunId;

use super::error::ApiError;
use super::live::{Frame, Item};
use super::state::Shared;

/// A recorded run: its events in bundle order and its result, if it has one.
pub struct StoredRun {
    pub workdir: PathBuf,
    pub items: Vec<Item>,
}

/// The run id, checked (an id names a directory: it must not be a path).
///
/// # Errors
/// 400 for an id that is not a run id.
pub fn run_id(id: &str) -> Result<RunId, ApiError> {
    RunId::new(id).map_err(|e| ApiError::bad_request(format!("run id: {e}")))
}

/// Finds the bundle of `run_id`: under `workdir` when given (checked against the roots),
/// else under each root and its direct subdirectories.
///
/// # Errors
/// 400 for a refused workdir; 404 when no bundle is found.
pub async fn load(
    state: &Shared,
    run_id: &RunId,
    workdir: Option<&str>,
) -> Result<StoredRun, ApiError> {
    let candidates = match workdir {
        Some(dir) => vec![
            state
                .roots
                .confine(dir)
                .map_err(|e| ApiError::path("workdir", &e))?,
        ],
        None => search_dirs(state.roots.dirs(), run_id),
    };
    let artifacts = &state.runtime.artifacts;
    for dir in candidates {
        if !bundle_dir(&dir, run_id).is_dir() {
            continue;
        }
        let events = artifacts
            .load_events(&dir, run_id)
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let result = artifacts
            .load_result(&dir, run_id)
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let mut items: Vec<Item> = events
            .into_iter()
            .zip(1..)
            .map(|(event, seq)| Item::Event(Frame::new(seq, event)))
            .collect();
        items.extend(result.map(|r| Item::Result(Arc::new(r))));
        return Ok(StoredRun {
            workdir: dir,
            items,
        });
    }
    Err(ApiError::not_found(format!("no run {}", run_id.as_str())))
}

fn bundle_dir(workdir: &Path, run_id: &RunId) -> PathBuf {
    workdir
        .join(".forgecode")
        .join("runs")
        .join(run_id.as_str())
}

/// Each root, then its direct subdirectories (the usual place of projects).
fn search_dirs(roots: &[PathBuf], run_id: &RunId) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for root in roots {
        dirs.push(root.clone());
        if let Ok(entries) = std::fs::read_dir(root) {
            let mut subdirs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter_map(|e| e.path().canonicalize().ok())
                // A symlinked subdirectory leading out of the roots is not searched.
                .filter(|p| roots.iter().any(|r| p.starts_with(r)))
                .filter(|p| bundle_dir(p, run_id).is_dir())
                .collect();
            subdirs.sort();
            dirs.extend(subdirs);
        }
    }
    dirs
}
