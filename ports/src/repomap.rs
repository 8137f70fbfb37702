//! The repository map's input: every file of a work tree as tags (definitions, referenced
//! identifiers, words), parsed or taken from a cache. The ranking and rendering are the
//! domain's (`forge_domain::task::repomap`).

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::repomap::FileTags;

/// The tags of a work tree, and how much of it was parsed rather than taken from the cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoTags {
    /// Sorted by path.
    pub files: Vec<FileTags>,
    /// Files read and parsed this time.
    pub parsed: usize,
    /// Files whose tags came from the cache (same content as before).
    pub cached: usize,
}

#[async_trait]
pub trait RepoMapper: Send + Sync {
    /// The tags of the text files under `root` (ignored files, `.git/` and `.forgecode/`
    /// left out, at most `limit` files), cached under the key of `repo` (the repository
    /// the work tree belongs to) by file content, so a later call on the same repository
    /// parses only the files that changed.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when `root` cannot be read. A cache that cannot be read or
    /// written is not an error: the files are parsed again.
    async fn tags(&self, root: &Path, repo: &Path, limit: usize) -> Result<RepoTags, ForgeError>;
}
