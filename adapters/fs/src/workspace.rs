//! [`FsWorkspace`]: file operations confined to a workspace root.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::Workspace;

use crate::atomic::write_atomic;
use crate::blocking::run_blocking;
use crate::confine::{canonical_root, confine};

/// The local-disk [`Workspace`]. Stateless: the root comes with every call, so one value
/// serves every run.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsWorkspace;

impl FsWorkspace {
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl Workspace for FsWorkspace {
    async fn open(&self, root: &Path) -> Result<PathBuf, ForgeError> {
        let root = root.to_path_buf();
        run_blocking("opening workspace", move || canonical_root(&root)).await
    }

    async fn resolve(&self, root: &Path, path: &Path) -> Result<PathBuf, ForgeError> {
        let (root, path) = (root.to_path_buf(), path.to_path_buf());
        run_blocking("resolving workspace path", move || confine(&root, &path)).await
    }

    async fn read_file(&self, root: &Path, path: &Path) -> Result<Vec<u8>, ForgeError> {
        let (root, path) = (root.to_path_buf(), path.to_path_buf());
        run_blocking("reading workspace file", move || {
            let resolved = confine(&root, &path)?;
            std::fs::read(&resolved)
                .map_err(|e| ForgeError::io(format!("reading {}", resolved.display()), e))
        })
        .await
    }

    async fn write_file(
        &self,
        root: &Path,
        path: &Path,
        contents: &[u8],
    ) -> Result<(), ForgeError> {
        let (root, path, contents) = (root.to_path_buf(), path.to_path_buf(), contents.to_vec());
        run_blocking("writing workspace file", move || {
            let resolved = confine(&root, &path)?;
            if let Some(parent) = resolved.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| ForgeError::io(format!("creating {}", parent.display()), e))?;
            }
            if std::fs::metadata(&resolved).is_ok_and(|m| m.is_dir()) {
                return Err(ForgeError::io(
                    format!("writing {}", resolved.display()),
                    std::io::Error::from(ErrorKind::IsADirectory),
                ));
            }
            write_atomic(&resolved, &contents)
        })
        .await
    }
}
