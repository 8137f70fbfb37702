//! A workspace that trusts every path: for use-case tests that do not touch the disk.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::Workspace;

/// `open` returns the root unchanged (or refuses roots listed as missing); file operations
/// keep contents in memory.
#[derive(Debug, Default)]
pub struct PassthroughWorkspace {
    missing: Vec<PathBuf>,
    files: Mutex<Vec<(PathBuf, Vec<u8>)>>,
}

impl PassthroughWorkspace {
    /// A workspace whose `open` refuses `root` as missing.
    pub fn with_missing(root: impl Into<PathBuf>) -> Self {
        Self {
            missing: vec![root.into()],
            ..Self::default()
        }
    }
}

#[async_trait]
impl Workspace for PassthroughWorkspace {
    async fn open(&self, root: &Path) -> Result<PathBuf, ForgeError> {
        if self.missing.iter().any(|m| m == root) {
            return Err(ForgeError::InvalidRequest {
                reason: format!("workdir {} does not exist", root.display()),
            });
        }
        Ok(root.to_path_buf())
    }

    async fn resolve(&self, root: &Path, path: &Path) -> Result<PathBuf, ForgeError> {
        forge_domain::path_policy::resolve_within(root, path)
    }

    async fn read_file(&self, root: &Path, path: &Path) -> Result<Vec<u8>, ForgeError> {
        let full = self.resolve(root, path).await?;
        let files = self
            .files
            .lock()
            .map_err(|e| ForgeError::io("fake workspace", e))?;
        files
            .iter()
            .find(|(p, _)| p == &full)
            .map(|(_, c)| c.clone())
            .ok_or_else(|| ForgeError::io("read", format!("{} not found", full.display())))
    }

    async fn write_file(
        &self,
        root: &Path,
        path: &Path,
        contents: &[u8],
    ) -> Result<(), ForgeError> {
        let full = self.resolve(root, path).await?;
        let mut files = self
            .files
            .lock()
            .map_err(|e| ForgeError::io("fake workspace", e))?;
        files.retain(|(p, _)| p != &full);
        files.push((full, contents.to_vec()));
        Ok(())
    }
}
