//! Where a queued task's agent session waits for its follow-ups (issue 39): the worker that
//! ran the task stores the session's archive with the task, and the worker that takes a
//! follow-up — on any machine — reads it back to resume the same session. Kept beside the
//! queue's tasks (SQLite or PostgreSQL). Archives hold the conversation, never credentials.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::session_archive::SessionArchive;
use forge_domain::task::TaskId;

#[async_trait]
pub trait SessionArchives: Send + Sync {
    /// Stores `archive` as task `task`'s session, replacing one stored before for the task
    /// (an attempt taken over).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the archive fails its check (too large, a path
    /// outside the home, no files); [`ForgeError::Io`] when the store cannot be reached or
    /// written.
    async fn put_session_archive(
        &self,
        task: &TaskId,
        archive: &SessionArchive,
    ) -> Result<(), ForgeError>;

    /// The newest archive of session `session_id` of `provider` (a resumed session keeps its
    /// id: the latest follow-up's archive holds the whole conversation); `None` when none
    /// was stored.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read, or a stored archive
    /// cannot be read.
    async fn session_archive(
        &self,
        provider: &str,
        session_id: &str,
    ) -> Result<Option<SessionArchive>, ForgeError>;
}

/// The archive's check as the error a store returns.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] saying what is wrong.
pub fn storable(archive: &SessionArchive) -> Result<String, ForgeError> {
    archive.check().map_err(|e| ForgeError::InvalidRequest {
        reason: format!(
            "session {} of {}: {e}",
            archive.session_id, archive.provider
        ),
    })?;
    serde_json::to_string(archive).map_err(|e| ForgeError::InvalidRequest {
        reason: format!("session {}: {e}", archive.session_id),
    })
}
