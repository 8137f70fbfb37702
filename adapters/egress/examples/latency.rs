//! What a model route adds to a request: p50 and p90 of sequential requests on one
//! kept-alive connection, straight to a loopback upstream and through the egress point's
//! credential route (key swap, hyper server, reqwest client). Both measured in the same run.
//!
//! `cargo run --release -p forge-adapter-egress --example latency`
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a measuring example: a panic is its failure, stdout its report"
)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use forge_adapter_egress::{Egress, EgressConfig, fresh_key};
use forge_domain::sandbox::{EgressRoute, KeySlot};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

const ROUNDS: usize = 2000;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|_req| async {
                    Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                        Bytes::from_static(b"{\"ok\":true}"),
                    )))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let credential = fresh_key(KeySlot::Header("x-api-key".into()), "sk-real");
    let placeholder = credential.placeholder.clone();
    let egress = Egress::start(EgressConfig {
        socket_dir: dir.path().join("s"),
        routes: vec![EgressRoute {
            addr: upstream,
            upstream: None,
            keys: vec![credential],
        }],
        allow_hosts: Vec::new(),
    })
    .unwrap();
    let socket = egress.spec().listen[0].socket.clone();

    let direct = measure(
        tokio::net::TcpStream::connect(upstream).await.unwrap(),
        &placeholder,
    )
    .await;
    let routed = measure(
        tokio::net::UnixStream::connect(&socket).await.unwrap(),
        &placeholder,
    )
    .await;
    println!("{ROUNDS} sequential POSTs, one kept-alive connection each");
    println!("direct : p50 {:?}  p90 {:?}", direct.0, direct.1);
    println!("route  : p50 {:?}  p90 {:?}", routed.0, routed.1);
    println!(
        "added  : p50 {:?}  (ratio {:.2})",
        routed.0.saturating_sub(direct.0),
        routed.0.as_secs_f64() / direct.0.as_secs_f64()
    );
}

async fn measure<IO>(io: IO, placeholder: &str) -> (Duration, Duration)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let request = http::Request::post("/v1/messages")
            .header("host", "127.0.0.1")
            .header("x-api-key", placeholder)
            .body(Full::new(Bytes::from_static(
                b"{\"model\":\"m\",\"messages\":[]}",
            )))
            .unwrap();
        let start = Instant::now();
        let answer = sender.send_request(request).await.unwrap();
        let _ = answer.into_body().collect().await.unwrap();
        times.push(start.elapsed());
    }
    times.sort();
    (times[ROUNDS / 2], times[ROUNDS * 9 / 10])
}
