//! Stage `changes`: the change so far, read from the work tree through the [`Vcs`] port.
//!
//! [`Vcs`]: forge_ports::Vcs

use forge_domain::ForgeError;
use forge_domain::task::{AddedLine, ChangeKind, ChangedFile};
use forge_ports::PathChangeKind;

use super::task::Task;

/// The change so far, without forge's own files (run bundles under `.forgecode/`, the
/// instruction file, which is restored and never part of the change).
///
/// # Errors
/// [`ForgeError::Io`] when git fails.
pub(super) async fn changed_files(
    task: &Task<'_>,
    instruction_file: &str,
) -> Result<Vec<ChangedFile>, ForgeError> {
    let vcs = &task.pipeline.ports.vcs;
    let changes = vcs.changes(&task.worktree).await?;
    let mut added = vcs.added_lines(&task.worktree).await?;
    let mut files = Vec::new();
    for c in changes {
        if c.path.starts_with(".forgecode/") || c.path == instruction_file {
            continue;
        }
        let lines = added
            .iter_mut()
            .find(|a| a.path == c.path)
            .map(|a| std::mem::take(&mut a.lines))
            .unwrap_or_default();
        files.push(ChangedFile {
            path: c.path,
            change: match c.kind {
                PathChangeKind::Added => ChangeKind::Added,
                PathChangeKind::Modified => ChangeKind::Modified,
                PathChangeKind::Deleted => ChangeKind::Deleted,
            },
            size_bytes: c.size,
            added: c.added,
            removed: c.removed,
            added_lines: lines
                .into_iter()
                .map(|(line, text)| AddedLine { line, text })
                .collect(),
        });
    }
    Ok(files)
}
