//! Runs synchronous file-system work off the async executor.
//!
//! Symlink resolution and atomic writes are sequences of blocking calls that must happen in
//! order; one `spawn_blocking` per sequence is cheaper and simpler than a chain of
//! `tokio::fs` calls (each of which is its own `spawn_blocking` anyway).

use forge_domain::ForgeError;

/// Runs `work` on the blocking pool. A panic or cancellation of the blocking task becomes
/// [`ForgeError::Io`] with `context`.
pub(crate) async fn run_blocking<T, F>(context: &str, work: F) -> Result<T, ForgeError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ForgeError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(join) => Err(ForgeError::io(context, join)),
    }
}
