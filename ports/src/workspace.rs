//! Sandboxed access to a workspace directory.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;

/// File operations confined to a workspace root. Every method takes the root so one
/// implementation serves every run.
#[async_trait]
pub trait Workspace: Send + Sync {
    /// Checks that `root` exists and is a directory; returns it canonicalised.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when it does not exist or is not a directory;
    /// [`ForgeError::Io`] when it cannot be read.
    async fn open(&self, root: &Path) -> Result<PathBuf, ForgeError>;

    /// Resolves `path` (relative to `root`, or absolute) to an absolute path inside `root`,
    /// following symlinks of the parts that exist.
    ///
    /// # Errors
    /// [`ForgeError::WorkspaceSecurity`] for `..` escapes, absolute paths outside the root,
    /// and symlinks that lead outside; [`ForgeError::Io`] when the disk cannot be read.
    async fn resolve(&self, root: &Path, path: &Path) -> Result<PathBuf, ForgeError>;

    /// Reads a file inside the workspace.
    ///
    /// # Errors
    /// As [`Workspace::resolve`]; [`ForgeError::Io`] when the file cannot be read.
    async fn read_file(&self, root: &Path, path: &Path) -> Result<Vec<u8>, ForgeError>;

    /// Writes a file inside the workspace atomically (temp file + rename), creating parents.
    ///
    /// # Errors
    /// As [`Workspace::resolve`]; [`ForgeError::Io`] when it cannot be written.
    async fn write_file(&self, root: &Path, path: &Path, contents: &[u8])
    -> Result<(), ForgeError>;
}
