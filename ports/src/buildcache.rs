//! Build caches shared by a repository's tasks (issue 28): cargo target directories,
//! `node_modules` and Python virtual environments kept under forge's own cache, seeded from
//! the user's warm build without changing it. The rules (keys, what may be linked, which
//! mtimes may come back, what `task gc` trims) are `forge_domain::task::buildcache`.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheKind, CacheState, CacheUsage};

/// What a task asks for: a slot of one cache entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    pub kind: CacheKind,
    /// The repository's folder in the cache (`forge_domain::task::buildcache::repo_folder`).
    pub repo_folder: String,
    /// The entry's name (`forge_domain::task::buildcache::entry_name`).
    pub entry: String,
    /// The user's checkout: a new slot is seeded from its `kind.seed_dir()` when `seed` is
    /// set, and its source files are what that build was judged against.
    pub checkout: PathBuf,
    /// Whether the checkout's build may seed a new slot (node: only when the checkout's
    /// lockfile has the entry's digest too).
    pub seed: bool,
}

/// A claimed slot: the task's own until the claim is dropped, so tasks running at the same
/// time never build in the same place.
#[derive(Debug)]
pub struct CacheClaim {
    pub kind: CacheKind,
    /// The entry's name and slot, for the report (`cargo-1a2b… slot 0`).
    pub label: String,
    /// The cache itself: the target directory, the `node_modules` or the virtual
    /// environment.
    pub dir: PathBuf,
    /// Whether `dir` holds a complete cache (an earlier task filled it, or it was seeded).
    pub ready: bool,
    pub state: CacheState,
    /// Holds the slot's lock; dropping it releases the slot.
    pub lease: Box<dyn std::any::Any + Send + Sync>,
}

#[async_trait]
pub trait BuildCache: Send + Sync {
    /// Where the caches live.
    fn root(&self) -> &Path;

    /// A hex digest of `text` (a toolchain's description, a path).
    fn digest_text(&self, text: &str) -> String;

    /// A hex digest of the contents of those of `names` that exist in `dir`, in order;
    /// `None` when none exists.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a file exists and cannot be read.
    async fn digest_files(&self, dir: &Path, names: &[&str]) -> Result<Option<String>, ForgeError>;

    /// Claims the first slot of the entry no other task holds (creating it when all are
    /// held); a new or unfinished slot is seeded from the checkout when the request allows,
    /// and remembers the checkout's source files as the ones its build was judged against.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the cache directory cannot be created, locked or seeded.
    async fn claim(&self, request: &ClaimRequest) -> Result<CacheClaim, ForgeError>;

    /// Marks the claim's cache complete (after a task filled a new one).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the marker cannot be written.
    async fn mark_ready(&self, claim: &CacheClaim) -> Result<(), ForgeError>;

    /// Copies those of `names` that exist in `from` and are missing in `to`, keeping their
    /// modification times. Returns the names copied.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a copy fails.
    async fn copy_missing(
        &self,
        from: &Path,
        to: &Path,
        names: &[&str],
    ) -> Result<Vec<String>, ForgeError>;

    /// Gives the work tree's files whose content equals the one the claim's build last
    /// judged the modification time they had then; returns how many changed.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the work tree cannot be read or a time cannot be set.
    async fn restore_mtimes(
        &self,
        claim: &CacheClaim,
        worktree: &Path,
    ) -> Result<usize, ForgeError>;

    /// Records the work tree's source files as the claim's build sees them now (called
    /// before each validation pass).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the work tree cannot be read or the record not written.
    async fn record_sources(&self, claim: &CacheClaim, worktree: &Path) -> Result<(), ForgeError>;

    /// Recreates the tree `from` at `to` with hard links (copies where linking fails),
    /// following `forge_domain::task::buildcache::seed_action` for `kind`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when `from` cannot be read or `to` written.
    async fn link_tree(&self, kind: CacheKind, from: &Path, to: &Path) -> Result<(), ForgeError>;

    /// Every slot in the cache: size, last claim, whether a task holds it.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the cache cannot be read.
    async fn usage(&self) -> Result<Vec<CacheUsage>, ForgeError>;

    /// Removes the slot at `path` (a path from [`BuildCache::usage`]); `false` when a task
    /// holds it (then nothing is removed).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot be removed, or `path` is not a slot of this cache.
    async fn remove(&self, path: &Path) -> Result<bool, ForgeError>;
}
