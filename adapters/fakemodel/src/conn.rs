//! Connections that can end in a TCP reset, for the `cut_after_events` knob.
//!
//! Dropping a connection normally sends FIN, which HTTP clients may read as a *clean* close:
//! gemini 0.61.0 then fails the turn ("terminated: other side closed") instead of retrying,
//! whereas a reset (RST) is retried, like a real network cut. So every accepted stream carries
//! a flag; the handler sets it when it decides to cut, and dropping the stream then closes it
//! with zero linger, which sends RST.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Per-connection info handed to the handler through `ConnectInfo`.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    reset_on_close: Arc<AtomicBool>,
}

impl ConnInfo {
    /// Close this connection with RST instead of FIN when it is dropped.
    pub fn reset_on_close(&self) {
        self.reset_on_close.store(true, Ordering::Relaxed);
    }
}

impl Connected<IncomingStream<'_, ResettableListener>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, ResettableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A TCP listener whose streams can be reset on close.
#[derive(Debug)]
pub struct ResettableListener {
    inner: TcpListener,
}

impl ResettableListener {
    pub fn new(inner: TcpListener) -> Self {
        ResettableListener { inner }
    }
}

impl Listener for ResettableListener {
    type Io = ResettableStream;
    type Addr = ConnInfo;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, peer)) => {
                    let flag = Arc::new(AtomicBool::new(false));
                    let info = ConnInfo {
                        peer,
                        reset_on_close: Arc::clone(&flag),
                    };
                    return (
                        ResettableStream {
                            inner: stream,
                            reset_on_close: flag,
                        },
                        info,
                    );
                }
                Err(err) => {
                    // Like axum's own listener: per-connection errors are skipped, resource
                    // exhaustion (EMFILE…) waits a little before accepting again.
                    tracing::debug!(%err, "fake model: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(ConnInfo {
            peer: self.inner.local_addr()?,
            reset_on_close: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// A TCP stream that sends RST on drop once its flag is set.
#[derive(Debug)]
pub struct ResettableStream {
    inner: TcpStream,
    reset_on_close: Arc<AtomicBool>,
}

impl Drop for ResettableStream {
    fn drop(&mut self) {
        if self.reset_on_close.load(Ordering::Relaxed) {
            // Zero linger never blocks: the close discards the buffer and sends RST.
            if let Err(err) = self.inner.set_zero_linger() {
                tracing::debug!(%err, "fake model: could not arm the reset");
            }
        }
    }
}

impl AsyncRead for ResettableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A connection to be reset must not send FIN first: the client would see a clean end.
        if self.reset_on_close.load(Ordering::Relaxed) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
