//! `task gc`: what a crashed or finished task left behind. Instruction files are restored
//! from their markers, and forge's work trees under the root are removed, except those a
//! delivery still waits on (`report.json` says `pending_approval`). Branches stay: they
//! hold the changes, and the report's rollback command removes them.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_domain::task::{TaskOutcome, TaskStatus};

use super::artifacts::TASKS_DIR;
use super::guard_file;
use super::pipeline::{TaskPorts, WORKTREES_DIR};

/// What `gc` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    pub restored: Vec<PathBuf>,
    pub removed_worktrees: Vec<PathBuf>,
    pub kept_worktrees: Vec<PathBuf>,
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
