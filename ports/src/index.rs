//! The repository index: the files of a work tree as the agent should see them (ignored
//! files left out), for the task pipeline's context.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;

/// What an index entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
}

/// One entry, its path relative to the indexed root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub path: String,
    pub kind: EntryKind,
    /// Bytes for files; 0 for directories and links.
    pub size: u64,
}

#[async_trait]
pub trait RepoIndexer: Send + Sync {
    /// The entries under `root`, sorted by path, respecting `.gitignore` (and `.ignore`,
    /// the global git excludes), without the `.git` directory, at most `limit` of them.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when `root` cannot be read.
    async fn index(&self, root: &Path, limit: usize) -> Result<Vec<IndexEntry>, ForgeError>;
}
