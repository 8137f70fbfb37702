//! What forge remembers of a forge's events (issue 39): each webhook delivery (and each
//! event `forge poll` reads) acts once, and `forge poll` resumes from a stored cursor. Kept
//! durably beside the queue's tasks, so every `serve` and worker over the same queue honours
//! the same once-only rule.

use async_trait::async_trait;
use forge_domain::ForgeError;

#[async_trait]
pub trait ForgeDeliveries: Send + Sync {
    /// Records that delivery `id` of `source` (`github`, `gitlab`, a marker's name) was
    /// received: `true` the first time (act on it), `false` on every later call (a
    /// redelivery or a replay: do nothing). Atomic: of two concurrent first calls one is
    /// `true`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn first_delivery(&self, source: &str, id: &str) -> Result<bool, ForgeError>;

    /// Forgets delivery `id` of `source`, so the next [`ForgeDeliveries::first_delivery`]
    /// is `true` again: `forge poll` releases an event it recorded and then could not act
    /// on (the forge went down), so the next pass acts on it instead of losing it. Forgetting
    /// an id never recorded does nothing.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn forget_delivery(&self, source: &str, id: &str) -> Result<(), ForgeError>;

    /// Whether delivery `id` of `source` was recorded, without recording it.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn delivery_seen(&self, source: &str, id: &str) -> Result<bool, ForgeError>;

    /// The cursor `forge poll` stored for `source`; `None` before the first poll.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn cursor(&self, source: &str) -> Result<Option<String>, ForgeError>;

    /// Stores `cursor` for `source`, replacing the one before.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn set_cursor(&self, source: &str, cursor: &str) -> Result<(), ForgeError>;
}
