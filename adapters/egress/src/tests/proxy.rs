//! The proxy: CONNECT and absolute-URI requests, allowed or refused and reported.

use std::net::IpAddr;

use tokio::net::UnixStream;

use super::routes::key;
use super::support::{Upstream, client, connect, request, text, within};
use forge_domain::sandbox::{EgressRoute, KeySlot};

use crate::{Denied, DenyReason, Egress, EgressConfig};

/// The real rule, except that this machine's loopback stands in for the Internet.
fn loopback_is_public(ip: IpAddr) -> Result<(), DenyReason> {
    if ip.is_loopback() {
        Ok(())
    } else {
        crate::allow::check_address(ip)
    }
}

fn start(
    dir: &tempfile::TempDir,
    routes: Vec<EgressRoute>,
    allow: &[&str],
    relaxed: bool,
) -> Egress {
    let config = EgressConfig {
        socket_dir: dir.path().join("s"),
        routes,
        allow_hosts: allow.iter().map(|a| a.parse().unwrap()).collect(),
    };
    if relaxed {
        Egress::start_with(config, loopback_is_public).unwrap()
    } else {
        Egress::start(config).unwrap()
    }
}

fn proxy_socket(egress: &Egress) -> std::path::PathBuf {
    egress.spec().listen.last().unwrap().socket.clone()
}

#[tokio::test]
async fn connect_to_an_allowed_host_tunnels() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let egress = start(&dir, vec![], &["127.0.0.1"], true);
    let target = upstream.addr.to_string();
    let (status, tunnel) = within("connect", connect(&proxy_socket(&egress), &target)).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let mut http = client(tunnel.unwrap()).await;
    let answer = within(
        "tunnel",
        http.send_request(request("GET", "/through", &[("host", &target)], "")),
    )
    .await;
    assert_eq!(
        text(answer.unwrap()).await,
        "upstream got /through (0 bytes)"
    );
}

#[tokio::test]
async fn refused_targets_get_403_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut egress = start(
        &dir,
        vec![],
        &[
            "registry.npmjs.org",
            "169.254.169.254",
            "127.0.0.1",
            "10.0.0.1",
        ],
        false,
    );
    let mut denials = egress.denials().unwrap();
    assert!(egress.denials().is_none(), "taken once");
    let cases = [
        ("example.com:443", DenyReason::NotAllowed),
        ("registry.npmjs.org.evil.com:443", DenyReason::NotAllowed),
        ("169.254.169.254:80", DenyReason::MetadataAddress),
        ("metadata.google.internal:80", DenyReason::MetadataAddress),
        ("127.0.0.1:22", DenyReason::Loopback),
        ("localhost:5432", DenyReason::Loopback),
        ("10.0.0.1:443", DenyReason::PrivateAddress),
    ];
    for (target, reason) in cases {
        let (status, tunnel) = within("connect", connect(&proxy_socket(&egress), target)).await;
        assert!(
            status.starts_with("HTTP/1.1 403 Forbidden forge sandbox: connection to"),
            "{target}: {status}"
        );
        assert!(status.ends_with(&reason.to_string()), "{target}: {status}");
        assert!(tunnel.is_none());
        let denied = within("denial", denials.recv()).await.unwrap();
        assert_eq!(
            denied,
            Denied {
                target: target.to_owned(),
                reason
            }
        );
    }
    // An absolute-URI request is held to the same rules.
    let mut http = client(UnixStream::connect(proxy_socket(&egress)).await.unwrap()).await;
    let answer = within(
        "get",
        http.send_request(request(
            "GET",
            "http://169.254.169.254/latest/meta-data/",
            &[],
            "",
        )),
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), 403);
    let denied = within("denial", denials.recv()).await.unwrap();
    assert_eq!(
        denied,
        Denied {
            target: "169.254.169.254".to_owned(),
            reason: DenyReason::MetadataAddress
        }
    );
}

#[tokio::test]
async fn absolute_uri_requests_to_allowed_hosts_are_forwarded() {
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let egress = start(&dir, vec![], &["127.0.0.1"], true);
    let mut http = client(UnixStream::connect(proxy_socket(&egress)).await.unwrap()).await;
    let uri = format!("http://{}/index.json?q=1", upstream.addr);
    let answer = within(
        "get",
        http.send_request(request(
            "GET",
            &uri,
            &[("proxy-connection", "keep-alive")],
            "",
        )),
    )
    .await
    .unwrap();
    assert_eq!(text(answer).await, "upstream got /index.json?q=1 (0 bytes)");
    let seen = &upstream.seen()[0];
    assert_eq!(seen.headers["host"], upstream.addr.to_string());
    assert!(seen.headers.get("proxy-connection").is_none());
    // https is CONNECT's; a proxy request without a host is no proxy request.
    for (uri, status) in [("https://example.com/", 400), ("/plain", 400)] {
        let mut http = client(UnixStream::connect(proxy_socket(&egress)).await.unwrap()).await;
        let answer = within("bad", http.send_request(request("GET", uri, &[], "")))
            .await
            .unwrap();
        assert_eq!(answer.status(), status, "{uri}");
    }
}

#[tokio::test]
async fn a_route_reached_through_the_proxy_is_served_as_the_route() {
    let model = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let route = EgressRoute {
        addr: model.addr,
        upstream: None,
        keys: vec![key(KeySlot::Header("x-api-key".into()))],
    };
    // No allow_hosts at all, and the real address rule: the route is reachable anyway.
    let egress = start(&dir, vec![route], &[], false);
    let target = model.addr.to_string();
    let (status, tunnel) = within("connect", connect(&proxy_socket(&egress), &target)).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let mut http = client(tunnel.unwrap()).await;
    let answer = within(
        "tunnel",
        http.send_request(request(
            "POST",
            "/v1/messages",
            &[("x-api-key", "forge-placeholder")],
            "{}",
        )),
    )
    .await;
    assert_eq!(answer.unwrap().status(), 200);
    let mut http = client(UnixStream::connect(proxy_socket(&egress)).await.unwrap()).await;
    let uri = format!("http://{target}/v1/messages");
    let answer = within(
        "get",
        http.send_request(request(
            "POST",
            &uri,
            &[("x-api-key", "forge-placeholder")],
            "{}",
        )),
    )
    .await;
    assert_eq!(answer.unwrap().status(), 200);
    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    for request in seen {
        assert_eq!(request.headers["x-api-key"], "sk-real-key");
    }
}

#[tokio::test]
async fn the_key_is_never_given_to_another_host() {
    let model = Upstream::start().await;
    let other = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let route = EgressRoute {
        addr: model.addr,
        upstream: None,
        keys: vec![key(KeySlot::Header("x-api-key".into()))],
    };
    let egress = start(&dir, vec![route], &["127.0.0.1"], true);
    let target = other.addr.to_string();
    let mut http = client(UnixStream::connect(proxy_socket(&egress)).await.unwrap()).await;
    let uri = format!("http://{target}/steal?key=forge-placeholder");
    let answer = within(
        "get",
        http.send_request(request(
            "GET",
            &uri,
            &[("x-api-key", "forge-placeholder")],
            "",
        )),
    )
    .await;
    assert_eq!(answer.unwrap().status(), 200);
    let (status, tunnel) = within("connect", connect(&proxy_socket(&egress), &target)).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let mut http = client(tunnel.unwrap()).await;
    let answer = within(
        "tunnel",
        http.send_request(request(
            "GET",
            "/steal",
            &[("x-api-key", "forge-placeholder")],
            "",
        )),
    )
    .await;
    assert_eq!(answer.unwrap().status(), 200);
    for seen in other.seen() {
        assert_eq!(seen.headers["x-api-key"], "forge-placeholder");
        assert!(!format!("{} {:?}", seen.uri, seen.headers).contains("sk-real-key"));
    }
    assert_eq!(other.seen().len(), 2);
    assert!(model.seen().is_empty());
}

#[test]
fn the_sandbox_is_told_where_the_proxy_is_and_that_routes_go_direct() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let dir = tempfile::tempdir().unwrap();
    let egress = start(
        &dir,
        vec![
            EgressRoute::relay("127.0.0.1:3128".parse().unwrap()),
            EgressRoute::relay("127.0.0.1:8080".parse().unwrap()),
        ],
        &[],
        false,
    );
    let env: std::collections::BTreeMap<String, String> = egress.inside_env().into_iter().collect();
    assert_eq!(
        env["HTTPS_PROXY"], "http://127.0.0.1:3129",
        "3128 is a route's"
    );
    assert_eq!(env["http_proxy"], env["HTTPS_PROXY"]);
    assert_eq!(env["NO_PROXY"], "127.0.0.1:3128,127.0.0.1:8080");
    let args = egress.bridge_args(std::path::Path::new("/usr/bin/forge-code-agent"));
    assert_eq!(
        args[..3],
        ["/usr/bin/forge-code-agent", "__sandbox-bridge", "--spec"].map(std::ffi::OsString::from)
    );
    assert_eq!(args[4], "--");
    let spec = crate::BridgeSpec::from_json(args[3].to_str().unwrap()).unwrap();
    assert_eq!(&spec, egress.spec());
    assert_eq!(
        spec.listen.last().unwrap().addr.to_string(),
        "127.0.0.1:3129"
    );
}
