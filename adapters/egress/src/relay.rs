//! Byte-for-byte relays: a connection handed on unchanged, both ways, until either side ends.

use tokio::io::{AsyncRead, AsyncWrite};

/// Copies both ways until both directions are done; errors (a reset peer) just end it.
pub(crate) async fn pipe<A, B>(mut a: A, mut b: B)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    if let Err(e) = tokio::io::copy_bidirectional(&mut a, &mut b).await {
        tracing::debug!("egress relay ended: {e}");
    }
}
