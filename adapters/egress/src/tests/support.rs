//! A recording upstream server and clients speaking to the egress point's sockets.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderMap, Request, Response};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::Semaphore;

use crate::body::{Body, BoxError};

/// What the upstream saw of one request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// An upstream on 127.0.0.1 that records every request. `/sse` sends one event, then a
/// second only once the test has released it: a stream that is buffered anywhere between
/// never shows the first event on its own, and the test would wait forever (its watchdog
/// fails it).
pub struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub release: Arc<Semaphore>,
}

impl Upstream {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(Semaphore::new(0));
        let (s, r) = (Arc::clone(&seen), Arc::clone(&release));
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (s, r) = (Arc::clone(&s), Arc::clone(&r));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        answer(req, Arc::clone(&s), Arc::clone(&r))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            seen,
            release,
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(
    req: Request<Incoming>,
    seen: Arc<Mutex<Vec<Seen>>>,
    release: Arc<Semaphore>,
) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let uri = parts.uri.to_string();
    seen.lock().unwrap().push(Seen {
        uri: uri.clone(),
        headers: parts.headers,
        body: body.clone(),
    });
    if parts.uri.path() == "/sse" {
        let events = futures::stream::once(async { Bytes::from_static(b"data: one\n\n") })
            .chain(futures::stream::once(async move {
                let _permit = release.acquire().await.unwrap();
                Bytes::from_static(b"data: two\n\n")
            }))
            .map(|b| Ok::<_, BoxError>(Frame::data(b)));
        let mut response = Response::new(BodyExt::boxed(StreamBody::new(events)));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        return Ok(response);
    }
    let text = format!("upstream got {uri} ({} bytes)", body.len());
    Ok(Response::new(
        Full::new(Bytes::from(text)).map_err(|n| match n {}).boxed(),
    ))
}

/// An HTTP/1 client on an already open connection.
pub async fn client<IO>(io: IO) -> hyper::client::conn::http1::SendRequest<Full<Bytes>>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

pub fn request(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

pub async fn text(response: Response<Incoming>) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Sends `CONNECT target` on a fresh connection to the proxy socket; returns the status
/// line and, when it is a 200, the tunnel.
pub async fn connect(proxy: &Path, target: &str) -> (String, Option<UnixStream>) {
    let stream = UnixStream::connect(proxy).await.unwrap();
    let mut reader = BufReader::new(stream);
    reader
        .get_mut()
        .write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut status = String::new();
    reader.read_line(&mut status).await.unwrap();
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            content_length = n.trim().parse().unwrap();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let status = status.trim_end().to_owned();
    if status.contains(" 200") {
        assert!(
            reader.buffer().is_empty(),
            "nothing before the tunnel's bytes"
        );
        (status, Some(reader.into_inner()))
    } else {
        let mut body = vec![0u8; content_length];
        tokio::io::AsyncReadExt::read_exact(&mut reader, &mut body)
            .await
            .unwrap();
        (
            format!("{status} {}", String::from_utf8_lossy(&body).trim_end()),
            None,
        )
    }
}

/// Fails a test that waits forever (a buffered stream) instead of hanging the suite.
pub async fn within<T>(what: &str, work: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(60), work)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer in 60 s"))
}
