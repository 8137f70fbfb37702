//! The allowlist proxy (`HTTP_PROXY`/`HTTPS_PROXY` inside the sandbox): `CONNECT host:port`
//! tunnels and absolute-URI requests to allowed hosts; everything else gets `403` and is
//! reported.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use forge_domain::sandbox::HostPattern;

use crate::allow;
use crate::body::{self, Body, BoxError};
use crate::denial::{Denied, DenyReason};
use crate::route::RouteService;

/// Everything a proxy connection needs.
pub(crate) struct Proxy {
    pub allow: Vec<HostPattern>,
    pub routes: Vec<Arc<RouteService>>,
    pub denials: UnboundedSender<Denied>,
    pub tasks: TaskTracker,
    pub stop: CancellationToken,
    /// `allow::check_address`; tests relax it to reach their servers on loopback.
    pub address_rule: fn(IpAddr) -> Result<(), DenyReason>,
}

/// Where an admitted request goes.
enum Target {
    Route(Arc<RouteService>),
    Addrs(Vec<SocketAddr>),
}

impl Proxy {
    /// Serves one connection from the bridge until it ends.
    pub(crate) async fn serve<IO>(self: Arc<Self>, io: IO)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let service = hyper::service::service_fn(move |request| {
            let this = Arc::clone(&self);
            async move { Ok::<_, std::convert::Infallible>(this.handle(request).await) }
        });
        if let Err(e) = hyper::server::conn::http1::Builder::new()
            .preserve_header_case(true)
            .serve_connection(TokioIo::new(io), service)
            .with_upgrades()
            .await
        {
            tracing::debug!("egress proxy connection ended: {e}");
        }
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let connect = request.method() == Method::CONNECT;
        let default_port = match request.uri().scheme_str() {
            _ if connect => 443,
            Some("http") => 80,
            Some(_) => {
                return body::text(
                    StatusCode::BAD_REQUEST,
                    "forge egress: only http:// URIs are proxied; use CONNECT for https\n",
                );
            }
            None => 0,
        };
        let Some(authority) = request.uri().authority() else {
            return body::text(
                StatusCode::BAD_REQUEST,
                "forge egress: this is a proxy; send CONNECT or an absolute URI\n",
            );
        };
        let host = allow::normalise(authority.host());
        let port = authority.port_u16().unwrap_or(default_port);
        let shown = authority.as_str().to_owned();
        let target = match self.decide(&host, port).await {
            Ok(target) => target,
            Err(reason) => return self.refuse(shown, reason),
        };
        // On the record like a refusal: a registry fetch is a connection out as any other.
        tracing::info!(target = %shown, "sandbox egress allowed");
        if connect {
            self.tunnel(request, target);
            Response::new(body::empty())
        } else {
            match target {
                Target::Route(route) => route.forward(request).await,
                Target::Addrs(addrs) => self.forward(request, &addrs).await,
            }
        }
    }

    /// A route's address is served as the route; anything else must pass the allowlist,
    /// and every address its name resolves to the address rule.
    async fn decide(&self, host: &str, port: u16) -> Result<Target, DenyReason> {
        let literal: Vec<IpAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) if host == "localhost" => {
                vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()]
            }
            Err(_) => Vec::new(),
        };
        for ip in literal {
            let addr = SocketAddr::new(ip, port);
            if let Some(route) = self.routes.iter().find(|r| r.route.addr == addr) {
                return Ok(Target::Route(Arc::clone(route)));
            }
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            (self.address_rule)(ip)?;
        }
        allow::check_name_only(host, port, &self.allow)?;
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|_| DenyReason::Unresolvable)?
            .collect();
        if addrs.is_empty() {
            return Err(DenyReason::Unresolvable);
        }
        for addr in &addrs {
            (self.address_rule)(addr.ip())?;
        }
        Ok(Target::Addrs(addrs))
    }

    fn refuse(&self, target: String, reason: DenyReason) -> Response<Body> {
        tracing::info!(%target, %reason, "sandbox egress refused");
        let message = format!("forge sandbox: connection to {target} refused: {reason}\n");
        // The receiver may be gone (the caller did not take it): the 403 still stands.
        let _ = self.denials.send(Denied { target, reason });
        body::text(StatusCode::FORBIDDEN, message)
    }

    /// After the `200`, the connection is the tunnel's.
    fn tunnel(&self, request: Request<Incoming>, target: Target) {
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            let work = async move {
                let upgraded = match hyper::upgrade::on(request).await {
                    Ok(upgraded) => TokioIo::new(upgraded),
                    Err(e) => {
                        tracing::debug!("egress proxy: CONNECT not upgraded: {e}");
                        return;
                    }
                };
                match target {
                    Target::Route(route) => route.serve(upgraded).await,
                    Target::Addrs(addrs) => match connect(&addrs).await {
                        Ok(upstream) => crate::relay::pipe(upgraded, upstream).await,
                        Err(e) => tracing::debug!("egress proxy: {e}"),
                    },
                }
            };
            tokio::select! {
                () = stop.cancelled() => {}
                () = work => {}
            }
        });
    }

    /// An absolute-URI request, sent in origin form over a connection to the address that
    /// was checked (not a fresh lookup, which could answer differently).
    async fn forward(&self, request: Request<Incoming>, addrs: &[SocketAddr]) -> Response<Body> {
        match self.try_forward(request, addrs).await {
            Ok(response) => response,
            Err(e) => body::text(
                StatusCode::BAD_GATEWAY,
                format!("forge egress: the host could not be reached: {e}\n"),
            ),
        }
    }

    async fn try_forward(
        &self,
        request: Request<Incoming>,
        addrs: &[SocketAddr],
    ) -> Result<Response<Body>, BoxError> {
        let (mut parts, incoming) = request.into_parts();
        let host = parts.uri.authority().map(|a| a.as_str().to_owned());
        body::strip_hop_by_hop(&mut parts.headers);
        if let Some(host) = host {
            parts.headers.insert(http::header::HOST, host.parse()?);
        }
        parts.uri = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()?;
        let stream = connect(addrs).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        // The connection ends with its one exchange (the sender is dropped below), or when the
        // egress point stops.
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                result = connection => if let Err(e) = result {
                    tracing::debug!("egress proxy upstream connection: {e}");
                }
            }
        });
        let answer = sender
            .send_request(Request::from_parts(parts, incoming))
            .await?;
        let (mut parts, incoming) = answer.into_parts();
        body::strip_hop_by_hop(&mut parts.headers);
        Ok(Response::from_parts(
            parts,
            incoming.map_err(|e| -> BoxError { Box::new(e) }).boxed(),
        ))
    }
}

async fn connect(addrs: &[SocketAddr]) -> std::io::Result<tokio::net::TcpStream> {
    let stream = tokio::net::TcpStream::connect(addrs).await?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}
