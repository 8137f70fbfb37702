//! Routes: relayed, or served as HTTP with the keys added outside.

use std::path::PathBuf;

use bytes::Bytes;
use http_body_util::BodyExt;
use tokio::net::UnixStream;

use super::support::{Upstream, client, request, text, within};
use forge_domain::sandbox::{EgressKey, EgressRoute, KeySlot};

use crate::{Egress, EgressConfig, EgressError, fresh_key};

pub(super) fn key(slot: KeySlot) -> EgressKey {
    EgressKey {
        slot,
        placeholder: "forge-placeholder".to_owned(),
        value: "sk-real-key".to_owned(),
    }
}

pub(super) fn start(dir: &tempfile::TempDir, routes: Vec<EgressRoute>) -> Egress {
    Egress::start(EgressConfig {
        socket_dir: dir.path().join("s"),
        routes,
        allow_hosts: Vec::new(),
    })
    .unwrap()
}

fn socket(egress: &Egress, n: usize) -> PathBuf {
    egress.spec().listen[n].socket.clone()
}

#[tokio::test]
async fn a_plain_route_is_relayed_byte_for_byte() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let egress = start(&dir, vec![EgressRoute::relay(upstream.addr)]);
    let mut http = client(UnixStream::connect(socket(&egress, 0)).await.unwrap()).await;
    let answer = within(
        "relay",
        http.send_request(request("GET", "/hello", &[("host", "x")], "")),
    )
    .await;
    assert_eq!(text(answer.unwrap()).await, "upstream got /hello (0 bytes)");
    // Relayed as is: the Host header the client sent arrives unchanged.
    assert_eq!(upstream.seen()[0].headers["host"], "x");
}

/// (slot, path and query, request headers, header to look at upstream, its expected value)
type KeyCase = (
    KeySlot,
    &'static str,
    Vec<(&'static str, &'static str)>,
    &'static str,
    &'static str,
);

#[tokio::test]
async fn the_model_route_gets_the_real_key_and_never_the_placeholder() {
    use KeySlot::{Header, Query};
    let cases: [KeyCase; 4] = [
        (
            Header("x-api-key".into()),
            "/v1/messages?beta=true",
            vec![("x-api-key", "forge-placeholder")],
            "x-api-key",
            "sk-real-key",
        ),
        (
            Header("authorization".into()),
            "/v1/responses",
            vec![("authorization", "Bearer forge-placeholder")],
            "authorization",
            "Bearer sk-real-key",
        ),
        (
            Header("x-goog-api-key".into()),
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            vec![("x-goog-api-key", "forge-placeholder")],
            "x-goog-api-key",
            "sk-real-key",
        ),
        (
            Query("key".into()),
            "/v1beta/models/m:generateContent?key=forge-placeholder",
            vec![],
            "",
            "",
        ),
    ];
    for (slot, path, headers, header, expected) in cases {
        let upstream = Upstream::start().await;
        let dir = tempfile::tempdir().unwrap();
        let route = EgressRoute {
            addr: upstream.addr,
            upstream: None,
            keys: vec![key(slot.clone())],
        };
        let egress = start(&dir, vec![route]);
        let mut http = client(UnixStream::connect(socket(&egress, 0)).await.unwrap()).await;
        let answer = within(
            "route",
            http.send_request(request("POST", path, &headers, "{\"model\":\"m\"}")),
        )
        .await
        .unwrap();
        assert_eq!(answer.status(), 200, "{slot:?}");
        let seen = &upstream.seen()[0];
        if header.is_empty() {
            assert_eq!(seen.uri, "/v1beta/models/m:generateContent?key=sk-real-key");
        } else {
            assert_eq!(seen.headers[header], expected, "{slot:?}");
            assert!(
                seen.uri.ends_with(path),
                "path and query kept: {}",
                seen.uri
            );
        }
        assert_eq!(seen.body, Bytes::from_static(b"{\"model\":\"m\"}"));
        let everything = format!("{} {:?}", seen.uri, seen.headers);
        assert!(
            !everything.contains("forge-placeholder"),
            "{slot:?}: {everything}"
        );
    }
}

#[tokio::test]
async fn server_sent_events_stream_through_without_buffering() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let route = EgressRoute {
        addr: upstream.addr,
        upstream: None,
        keys: vec![key(KeySlot::Header("x-api-key".into()))],
    };
    let egress = start(&dir, vec![route]);
    let mut http = client(UnixStream::connect(socket(&egress, 0)).await.unwrap()).await;
    let answer = within(
        "sse",
        http.send_request(request(
            "GET",
            "/sse",
            &[("x-api-key", "forge-placeholder")],
            "",
        )),
    )
    .await
    .unwrap();
    assert_eq!(answer.headers()["content-type"], "text/event-stream");
    let mut body = answer.into_body();
    // The upstream holds the second event back until the first has arrived here.
    let first = within("first event", body.frame()).await.unwrap().unwrap();
    assert_eq!(first.into_data().unwrap(), "data: one\n\n");
    upstream.release.add_permits(1);
    let second = within("second event", body.frame()).await.unwrap().unwrap();
    assert_eq!(second.into_data().unwrap(), "data: two\n\n");
    assert!(within("end", body.frame()).await.is_none());
}

#[tokio::test]
async fn a_route_with_another_upstream_keeps_the_base_path() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let inside = "127.0.0.1:1".parse().unwrap();
    let route = EgressRoute {
        addr: inside,
        upstream: Some(format!("http://{}/base/", upstream.addr)),
        keys: Vec::new(),
    };
    let egress = start(&dir, vec![route]);
    let mut http = client(UnixStream::connect(socket(&egress, 0)).await.unwrap()).await;
    let answer = within(
        "upstream",
        http.send_request(request("GET", "/v1/x?y=1", &[("host", "127.0.0.1:1")], "")),
    )
    .await
    .unwrap();
    assert_eq!(text(answer).await, "upstream got /base/v1/x?y=1 (0 bytes)");
    // The Host header is the upstream's, not the inside address.
    assert_eq!(
        upstream.seen()[0].headers["host"],
        upstream.addr.to_string()
    );
}

#[tokio::test]
async fn stopping_leaves_no_socket_and_no_listener() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let egress = start(&dir, vec![EgressRoute::relay(upstream.addr)]);
    let sockets: Vec<PathBuf> = egress
        .spec()
        .listen
        .iter()
        .map(|l| l.socket.clone())
        .collect();
    assert_eq!(sockets.len(), 2, "one route and the proxy");
    let open = UnixStream::connect(&sockets[0]).await.unwrap();
    within("shutdown", egress.shutdown()).await;
    for socket in &sockets {
        assert!(!socket.exists(), "{} removed", socket.display());
        assert!(UnixStream::connect(socket).await.is_err());
    }
    // The connection that was open is ended too.
    let mut open = open;
    let mut byte = [0u8; 1];
    let read = within(
        "closed",
        tokio::io::AsyncReadExt::read(&mut open, &mut byte),
    )
    .await;
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");

    // Dropping does the same.
    let egress = start(&dir, vec![EgressRoute::relay(upstream.addr)]);
    let socket = egress.spec().listen[0].socket.clone();
    drop(egress);
    assert!(!socket.exists());
}

#[tokio::test]
async fn bad_configurations_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let addr = "127.0.0.1:9".parse().unwrap();
    let with = |routes: Vec<EgressRoute>, socket_dir: PathBuf| {
        Egress::start(EgressConfig {
            socket_dir,
            routes,
            allow_hosts: Vec::new(),
        })
        .unwrap_err()
    };
    let short = dir.path().join("s");
    let err = with(
        vec![EgressRoute::relay(addr), EgressRoute::relay(addr)],
        short.clone(),
    );
    assert!(matches!(err, EgressError::DuplicateRoute { .. }), "{err}");
    let err = with(
        vec![EgressRoute {
            addr,
            upstream: Some("ftp://x".into()),
            keys: vec![],
        }],
        short.clone(),
    );
    assert!(matches!(err, EgressError::BadUpstream { .. }), "{err}");
    let err = with(
        vec![EgressRoute {
            addr,
            upstream: None,
            keys: vec![key(KeySlot::Header("bad header".into()))],
        }],
        short,
    );
    assert!(
        matches!(err, EgressError::BadCredentialHeader { .. }),
        "{err}"
    );
    let err = with(vec![], dir.path().join("d".repeat(120)));
    assert!(
        matches!(err, EgressError::SocketPathTooLong { .. }),
        "{err}"
    );
    assert!(
        "not a host"
            .parse::<forge_domain::sandbox::HostPattern>()
            .is_err()
    );
}

#[test]
fn starting_outside_a_runtime_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let err = Egress::start(EgressConfig {
        socket_dir: dir.path().join("s"),
        routes: Vec::new(),
        allow_hosts: Vec::new(),
    })
    .unwrap_err();
    assert!(matches!(err, EgressError::NoRuntime), "{err}");
}

#[test]
fn a_credential_never_shows_its_key() {
    let credential = fresh_key(KeySlot::Header("x-api-key".into()), "sk-secret");
    assert!(
        credential
            .placeholder
            .starts_with("forge-sandbox-placeholder-")
    );
    assert!(!format!("{credential:?}").contains("sk-secret"));
    let other = fresh_key(KeySlot::Header("x-api-key".into()), "sk-secret");
    assert_ne!(credential.placeholder, other.placeholder);
}
