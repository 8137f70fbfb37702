//! A provider's session travelling with its task (issue 39): each CLI keeps a session in
//! files of its own under its home, some keyed by the working directory's path (claude's
//! escaped cwd, gemini's project registry and hash). An adapter that knows its files exports
//! one session into a [`SessionArchive`] and imports one under another home for another work
//! tree, so a follow-up resumes the same session on whichever worker takes it. Only session
//! files travel, never auth or config files. File access goes through [`FileStore`]: the
//! adapter decides what and where, the caller's file store reads and writes.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::session_archive::SessionArchive;
use forge_domain::{ForgeError, SessionId};

use crate::files::FileStore;

#[async_trait]
pub trait SessionTravel: Send + Sync {
    /// The files of session `session`, run in the work tree `workdir` with the CLI home
    /// `home` (the directory the run's `HOME` named), as an archive.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the home holds no file of the session (it ran
    /// elsewhere, or the CLI kept nothing) or a file is not text; [`ForgeError::Io`] when a
    /// file cannot be read.
    async fn export_session(
        &self,
        files: &dyn FileStore,
        session: &SessionId,
        workdir: &Path,
        home: &Path,
    ) -> Result<SessionArchive, ForgeError>;

    /// Writes `archive`'s files under the CLI home `home` for the work tree `workdir`,
    /// rewriting what the CLI keys by the work tree's path, so that resuming the session
    /// there finds it.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the archive is of another provider or fails
    /// [`SessionArchive::check`]; [`ForgeError::Io`] when a file cannot be written.
    async fn import_session(
        &self,
        files: &dyn FileStore,
        archive: &SessionArchive,
        workdir: &Path,
        home: &Path,
    ) -> Result<(), ForgeError>;
}

/// The archive's check as the error an importer returns.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] naming the provider expected and what is wrong.
pub fn checked(archive: &SessionArchive, provider: &str) -> Result<(), ForgeError> {
    if archive.provider != provider {
        return Err(ForgeError::InvalidRequest {
            reason: format!(
                "a {} session cannot be imported into {provider}",
                archive.provider
            ),
        });
    }
    archive.check().map_err(|e| ForgeError::InvalidRequest {
        reason: format!("session {}: {e}", archive.session_id),
    })
}

/// The file at `path` as text, or why it cannot travel.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when the file is not UTF-8 text.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, ForgeError> {
    String::from_utf8(bytes).map_err(|_| ForgeError::InvalidRequest {
        reason: format!("session file {} is not text", path.display()),
    })
}
