//! Byte-for-byte relays: a connection handed on unchanged, both ways, until either side ends.

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

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

/// Like [`pipe`] for an HTTP route inside the sandbox: when the egress side ends first (the
/// CLI still waiting), the CLI's connection is reset rather than closed — what the CLI would
/// have seen from a model that cut its stream.
pub(crate) async fn pipe_resetting(cli: TcpStream, egress: UnixStream) {
    let (mut cli_read, mut cli_write) = cli.into_split();
    let (mut egress_read, mut egress_write) = egress.into_split();
    let egress_first = {
        let upstream = async {
            let _ = tokio::io::copy(&mut cli_read, &mut egress_write).await;
            let _ = egress_write.shutdown().await;
        };
        let downstream = tokio::io::copy(&mut egress_read, &mut cli_write);
        tokio::pin!(upstream, downstream);
        tokio::select! {
            // The CLI is done sending: the answer still flows back, then a clean close.
            () = &mut upstream => {
                let _ = downstream.await;
                false
            }
            _ = &mut downstream => true,
        }
    };
    if !egress_first {
        let _ = cli_write.shutdown().await;
        return;
    }
    // The egress ended while the CLI was still on the connection.
    match cli_read.reunite(cli_write) {
        Ok(cli) => {
            let _ = cli.set_zero_linger();
        }
        Err(e) => tracing::debug!("bridge: cannot reset the connection: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream, UnixStream};

    /// A CLI's connection through `pipe_resetting`, and the egress's end of it.
    async fn connected() -> (TcpStream, UnixStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let cli = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (inside, _) = listener.accept().await.unwrap();
        let (bridge_end, egress_end) = UnixStream::pair().unwrap();
        tokio::spawn(super::pipe_resetting(inside, bridge_end));
        (cli, egress_end)
    }

    #[tokio::test]
    async fn a_stream_the_egress_cuts_is_a_reset_for_the_cli() {
        let (mut cli, mut egress) = connected().await;
        cli.write_all(b"POST /").await.unwrap();
        let mut request = [0u8; 6];
        egress.read_exact(&mut request).await.unwrap();
        egress.write_all(b"data: 1\n\n").await.unwrap();
        drop(egress);
        let mut got = Vec::new();
        let err = cli.read_to_end(&mut got).await.unwrap_err();
        assert_eq!(got, b"data: 1\n\n");
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
    }

    #[tokio::test]
    async fn a_cli_that_ended_first_gets_the_answer_and_a_clean_close() {
        let (mut cli, mut egress) = connected().await;
        cli.write_all(b"GET /").await.unwrap();
        cli.shutdown().await.unwrap();
        let mut request = Vec::new();
        egress.read_to_end(&mut request).await.unwrap();
        assert_eq!(request, b"GET /");
        egress.write_all(b"answer").await.unwrap();
        drop(egress);
        let mut got = Vec::new();
        cli.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"answer");
    }
}
