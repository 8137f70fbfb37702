//! What the review reads: the changed files with their added lines. The caller (the pipeline,
//! through the `Vcs` port) builds it from `git diff` and the untracked files.

use serde::{Deserialize, Serialize};

use crate::task::change::{ChangeKind, FileChange};

/// One added line of the new file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedLine {
    pub line: u32,
    pub text: String,
}

/// One changed file as the review sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub change: ChangeKind,
    /// Size of the new file in bytes (`None` for a deleted file or when unknown).
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Added and removed line counts (0/0 for binary files).
    pub added: u64,
    pub removed: u64,
    /// The added lines; for a new file, all its lines. May be empty for binary files.
    #[serde(default)]
    pub added_lines: Vec<AddedLine>,
}

impl ChangedFile {
    /// The report's view of this file.
    pub fn to_file_change(&self) -> FileChange {
        FileChange {
            path: self.path.clone(),
            change: self.change,
            added: self.added,
            removed: self.removed,
        }
    }
}
