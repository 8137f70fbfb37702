//! Telling a person that a change waits for them.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalNotice;

/// One channel (a webhook, a Telegram chat). The use case sends through every configured
/// channel and records each one's answer, so one channel being down loses nothing.
#[async_trait]
pub trait Notifier: Send + Sync {
    /// The channel's name as reports show it: `webhook`, `telegram`.
    fn channel(&self) -> &str;

    /// Sends the notice, retrying transient failures itself.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the channel did not accept it after the retries (refused
    /// connection, timeout, a non-success status); the message names the channel and never
    /// contains a token.
    async fn notify(&self, notice: &ApprovalNotice) -> Result<(), ForgeError>;
}
