//! [`RecordingBuildCache`]: a `BuildCache` in memory that hands out slots in a directory
//! of the test's choosing with the state it was told, and records what it was asked.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheState, CacheUsage};
use forge_ports::{BuildCache, CacheClaim, ClaimRequest};

/// A build cache whose every claim is `state`, in `<root>/<entry>`.
#[derive(Debug)]
pub struct RecordingBuildCache {
    root: PathBuf,
    state: CacheState,
    /// How many files `restore_mtimes` reports.
    warm_files: usize,
    /// What it was asked, in order (`claim cargo-…`, `copy Cargo.lock`, `restore`, `record` …).
    pub calls: Mutex<Vec<String>>,
}

impl RecordingBuildCache {
    pub fn new(root: impl Into<PathBuf>, state: CacheState, warm_files: usize) -> Self {
        Self {
            root: root.into(),
            state,
            warm_files,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn note(&self, call: String) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(call);
        }
    }

    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl BuildCache for RecordingBuildCache {
    fn root(&self) -> &Path {
        &self.root
    }

    fn digest_text(&self, text: &str) -> String {
        format!("{:016x}", text.len())
    }

    async fn digest_files(
        &self,
        _dir: &Path,
        names: &[&str],
    ) -> Result<Option<String>, ForgeError> {
        Ok(Some(format!("{:016x}", names.len())))
    }

    async fn claim(&self, request: &ClaimRequest) -> Result<CacheClaim, ForgeError> {
        self.note(format!("claim {} seed={}", request.entry, request.seed));
        let dir = self.root.join(&request.entry);
        std::fs::create_dir_all(&dir).map_err(|e| ForgeError::io("fake cache", e))?;
        Ok(CacheClaim {
            kind: request.kind,
            label: format!("{} slot 0", request.entry),
            dir,
            ready: self.state != CacheState::Miss,
            state: self.state,
            lease: Box::new(()),
        })
    }

    async fn mark_ready(&self, claim: &CacheClaim) -> Result<(), ForgeError> {
        self.note(format!("ready {}", claim.label));
        Ok(())
    }

    async fn copy_missing(
        &self,
        _from: &Path,
        _to: &Path,
        names: &[&str],
    ) -> Result<Vec<String>, ForgeError> {
        self.note(format!("copy {}", names.join(",")));
        Ok(Vec::new())
    }

    async fn restore_mtimes(
        &self,
        _claim: &CacheClaim,
        _worktree: &Path,
    ) -> Result<usize, ForgeError> {
        self.note("restore".into());
        Ok(self.warm_files)
    }

    async fn record_sources(
        &self,
        _claim: &CacheClaim,
        _worktree: &Path,
    ) -> Result<(), ForgeError> {
        self.note("record".into());
        Ok(())
    }

    async fn link_tree(
        &self,
        kind: forge_domain::task::buildcache::CacheKind,
        _from: &Path,
        _to: &Path,
    ) -> Result<(), ForgeError> {
        self.note(format!("link {kind}"));
        Ok(())
    }

    async fn usage(&self) -> Result<Vec<CacheUsage>, ForgeError> {
        Ok(Vec::new())
    }

    async fn remove(&self, _path: &Path) -> Result<bool, ForgeError> {
        Ok(false)
    }
}
