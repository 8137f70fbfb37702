//! Version control, as far as the runtime needs it today.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;

#[async_trait]
pub trait Vcs: Send + Sync {
    /// Whether `dir` is inside a repository work tree.
    ///
    /// # Errors
    /// [`ForgeError::ExecutableNotFound`] when the VCS tool is missing; [`ForgeError::Io`]
    /// when it cannot be run.
    async fn is_repository(&self, dir: &Path) -> Result<bool, ForgeError>;
}
