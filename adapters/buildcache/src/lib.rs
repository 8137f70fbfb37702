//! forge-adapter-buildcache: [`FsBuildCache`] implements [`forge_ports::BuildCache`] on the
//! local file system.
//!
//! Layout under the root (default `~/.cache/forge-code-agent/build`):
//!
//! ```text
//! <repo folder>/<entry>/slot-<n>/
//!     lock          flock'ed by the task that holds the slot
//!     last-used     its mtime: the slot's last claim (for `task gc`)
//!     ready         the cache below is complete
//!     sources.json  the source files (digest, mtime) its build last judged
//!     cache/        the target directory, node_modules or virtual environment
//! ```
//!
//! The user's own build is only read: files compilers replace (never rewrite) are hard
//! links, files cargo rewrites in place are copies (`seed_action`).

mod cargo_lock;
mod digest;
mod slot;
mod sources;
mod tree;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheKind, CacheUsage};
use forge_ports::{BuildCache, CacheClaim, ClaimRequest};

/// The build caches under one root directory.
#[derive(Debug, Clone)]
pub struct FsBuildCache {
    root: PathBuf,
}

impl FsBuildCache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

/// An I/O error on `path`.
fn io(path: &std::path::Path, e: impl std::fmt::Display) -> ForgeError {
    ForgeError::io(path.display().to_string(), e)
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, ForgeError> + Send + 'static,
) -> Result<T, ForgeError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ForgeError::io(what, e.to_string()))?
}

#[async_trait]
impl BuildCache for FsBuildCache {
    fn root(&self) -> &Path {
        &self.root
    }

    fn digest_text(&self, text: &str) -> String {
        digest::text(text)
    }

    async fn digest_files(&self, dir: &Path, names: &[&str]) -> Result<Option<String>, ForgeError> {
        let dir = dir.to_owned();
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        blocking("digesting lockfiles", move || digest::files(&dir, &names)).await
    }

    async fn claim(&self, request: &ClaimRequest) -> Result<CacheClaim, ForgeError> {
        let root = self.root.clone();
        let request = request.clone();
        blocking("claiming a build cache", move || {
            slot::claim(&root, &request)
        })
        .await
    }

    async fn mark_ready(&self, claim: &CacheClaim) -> Result<(), ForgeError> {
        let dir = claim.dir.clone();
        blocking("marking a build cache ready", move || {
            slot::mark_ready(&dir)
        })
        .await
    }

    async fn copy_missing(
        &self,
        from: &Path,
        to: &Path,
        names: &[&str],
    ) -> Result<Vec<String>, ForgeError> {
        let (from, to) = (from.to_owned(), to.to_owned());
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        blocking("copying lockfiles", move || {
            tree::copy_missing(&from, &to, &names)
        })
        .await
    }

    async fn restore_mtimes(
        &self,
        claim: &CacheClaim,
        worktree: &Path,
    ) -> Result<usize, ForgeError> {
        let (dir, worktree) = (claim.dir.clone(), worktree.to_owned());
        blocking("restoring source mtimes", move || {
            sources::restore(&slot::sources_file(&dir), &worktree)
        })
        .await
    }

    async fn record_sources(&self, claim: &CacheClaim, worktree: &Path) -> Result<(), ForgeError> {
        let (dir, worktree) = (claim.dir.clone(), worktree.to_owned());
        blocking("recording sources", move || {
            sources::record(&slot::sources_file(&dir), &worktree)
        })
        .await
    }

    async fn link_tree(&self, kind: CacheKind, from: &Path, to: &Path) -> Result<(), ForgeError> {
        let (from, to) = (from.to_owned(), to.to_owned());
        blocking("linking a cache tree", move || tree::link(kind, &from, &to)).await
    }

    async fn usage(&self) -> Result<Vec<CacheUsage>, ForgeError> {
        let root = self.root.clone();
        blocking("measuring the build caches", move || slot::usage(&root)).await
    }

    async fn remove(&self, path: &Path) -> Result<bool, ForgeError> {
        let (root, path) = (self.root.clone(), path.to_owned());
        blocking("removing a build cache", move || slot::remove(&root, &path)).await
    }
}
