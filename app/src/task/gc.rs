//! `task gc`: what a crashed or finished task left behind. Instruction files are restored
//! from their markers, and forge's work trees under the root are removed, except those a
//! delivery still waits on (`report.json` says `pending_approval`). Branches stay: they
//! hold the changes, and the report's rollback command removes them. The build caches are
//! trimmed to the size limit (`[cache] max_size_mb`), least recently used first, never
//! one a running task holds.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_domain::task::buildcache::trim;
use forge_domain::task::{TaskOutcome, TaskStatus};
use forge_ports::BuildCache;

use super::artifacts::TASKS_DIR;
use super::guard_file;
use super::pipeline::{TaskPorts, WORKTREES_DIR};

/// What `gc` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    pub restored: Vec<PathBuf>,
    pub removed_worktrees: Vec<PathBuf>,
    pub kept_worktrees: Vec<PathBuf>,
    /// Build cache slots removed to fit the size limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trimmed_caches: Vec<PathBuf>,
    /// The build caches' size after trimming (bytes), when there are caches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
}

/// Cleans the repository at `repo` (its work-tree root: `root`, default
/// `.forgecode/worktrees`); `keep_worktrees`: only restore instruction files.
///
/// # Errors
/// [`ForgeError::Io`] when a marker, file or work tree cannot be handled.
pub async fn gc(
    ports: &TaskPorts,
    repo: &Path,
    root: Option<&Path>,
    keep_worktrees: bool,
) -> Result<GcReport, ForgeError> {
    let mut report = GcReport {
        restored: guard_file::restore_leftovers(ports.files.as_ref(), &repo.join(TASKS_DIR))
            .await?,
        ..GcReport::default()
    };
    let root = root.map_or_else(|| repo.join(WORKTREES_DIR), |r| repo.join(r));
    for tree in ports.vcs.worktrees(repo).await? {
        if !tree.path.starts_with(&root) {
            continue;
        }
        let id = tree
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let report_path = repo.join(TASKS_DIR).join(&id).join("report.json");
        let pending = match ports.files.read(&report_path).await? {
            Some(bytes) => serde_json::from_slice::<TaskOutcome>(&bytes)
                .is_ok_and(|o| o.status == TaskStatus::PendingApproval),
            None => false,
        };
        if pending || keep_worktrees {
            report.kept_worktrees.push(tree.path);
        } else {
            ports.vcs.remove_worktree(repo, &tree.path).await?;
            report.removed_worktrees.push(tree.path);
        }
    }
    Ok(report)
}

/// Trims the build caches to `limit_bytes` (see [`trim`]); records what went and what is
/// left in `report`.
///
/// # Errors
/// [`ForgeError::Io`] when the caches cannot be measured or a slot not removed.
pub async fn trim_caches(
    cache: &dyn BuildCache,
    limit_bytes: u64,
    report: &mut GcReport,
) -> Result<(), ForgeError> {
    let usage = cache.usage().await?;
    if usage.is_empty() {
        return Ok(());
    }
    let mut total: u64 = usage.iter().map(|u| u.size_bytes).sum();
    for path in trim(&usage, limit_bytes) {
        let path = PathBuf::from(path);
        // Claimed since it was measured: it stays.
        if cache.remove(&path).await? {
            let size = usage
                .iter()
                .find(|u| Path::new(&u.path) == path)
                .map_or(0, |u| u.size_bytes);
            total = total.saturating_sub(size);
            report.trimmed_caches.push(path);
        }
    }
    report.cache_bytes = Some(total);
    Ok(())
}
