//! Share links: read-only capabilities for one task each, kept durably beside the queue's
//! tasks so every `serve` over the same queue honours (and forgets) the same links.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::share::ShareLink;
use forge_domain::task::TaskId;

#[async_trait]
pub trait ShareLinks: Send + Sync {
    /// Stores a new link (active); returns it as stored, with its time.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when a link with that id exists; [`ForgeError::Io`]
    /// when the store cannot be reached or written.
    async fn create_share(&self, link: &ShareLink) -> Result<ShareLink, ForgeError>;

    /// The link with that id, revoked or not; `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError>;

    /// The task's links, oldest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn shares(&self, task: &TaskId) -> Result<Vec<ShareLink>, ForgeError>;

    /// Revokes the link once: `None` when there is no such link; else the link as it now
    /// stands (a link revoked before keeps its first revocation time).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn revoke_share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError>;
}
