//! A route's outside half: a connection from the bridge (or a proxy tunnel to the route's
//! address) served as HTTP with the keys added, or relayed byte for byte.

use std::sync::Arc;

use futures::TryStreamExt;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyDataStream, BodyExt, StreamBody};
use hyper::body::{Body as _, Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::body::{self, Body, BoxError};
use crate::credentials;
use crate::error::EgressError;
use forge_domain::sandbox::{EgressRoute, KeySlot};

/// One route, ready to serve connections.
pub(crate) struct RouteService {
    pub route: EgressRoute,
    /// The base URL HTTP requests go to (`http://<addr>` unless the route names another).
    base: reqwest::Url,
    /// Shared by every connection of the route: kept-alive upstream connections, so a
    /// request costs no new handshake.
    client: reqwest::Client,
}

impl RouteService {
    pub(crate) fn new(route: EgressRoute) -> Result<Self, EgressError> {
        let upstream = route
            .upstream
            .clone()
            .unwrap_or_else(|| format!("http://{}", route.addr));
        let bad = || EgressError::BadUpstream {
            addr: route.addr.to_string(),
            upstream: upstream.clone(),
        };
        for credential in &route.keys {
            if let KeySlot::Header(name) = &credential.slot {
                if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(EgressError::BadCredentialHeader {
                        addr: route.addr.to_string(),
                        name: name.clone(),
                    });
                }
            }
        }
        let base = reqwest::Url::parse(&upstream).map_err(|_| bad())?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err(bad());
        }
        // forge's own proxy settings are not the sandbox's: the route goes where it says.
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|_| bad())?;
        Ok(Self {
            route,
            base,
            client,
        })
    }

    /// Serves one connection to the route until it ends.
    pub(crate) async fn serve<IO>(self: Arc<Self>, io: IO)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        if !self.route.is_http() {
            match tokio::net::TcpStream::connect(self.route.addr).await {
                Ok(upstream) => {
                    let _ = upstream.set_nodelay(true);
                    crate::relay::pipe(io, upstream).await;
                }
                Err(e) => tracing::warn!("egress route {}: {e}", self.route.addr),
            }
            return;
        }
        let service = hyper::service::service_fn(move |request| {
            let this = Arc::clone(&self);
            async move { Ok::<_, std::convert::Infallible>(this.forward(request).await) }
        });
        if let Err(e) = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(io), service)
            .await
        {
            tracing::debug!("egress route connection ended: {e}");
        }
    }

    /// One request to the upstream, with the keys in place of their placeholders; the
    /// answer streams back as it arrives.
    pub(crate) async fn forward(&self, request: Request<Incoming>) -> Response<Body> {
        let (mut parts, incoming) = request.into_parts();
        credentials::apply(&self.route.keys, &mut parts.headers, &mut parts.uri);
        body::strip_hop_by_hop(&mut parts.headers);
        parts.headers.remove(http::header::HOST);
        let url = self.url_for(&parts.uri);
        let mut upstream = self
            .client
            .request(parts.method, url)
            .headers(parts.headers);
        if !incoming.is_end_stream() {
            upstream = upstream.body(reqwest::Body::wrap_stream(BodyDataStream::new(incoming)));
        }
        match upstream.send().await {
            Ok(answer) => stream_back(answer),
            Err(e) => {
                tracing::warn!("egress route {}: {e}", self.route.addr);
                body::text(
                    StatusCode::BAD_GATEWAY,
                    format!("forge egress: the route's upstream failed: {e}\n"),
                )
            }
        }
    }

    /// The base URL's path, then the request's path and query.
    fn url_for(&self, uri: &http::Uri) -> String {
        let origin = self.base.origin().ascii_serialization();
        let prefix = self.base.path().trim_end_matches('/');
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        format!("{origin}{prefix}{path}")
    }
}

fn stream_back(answer: reqwest::Response) -> Response<Body> {
    let status = answer.status();
    let mut headers = answer.headers().clone();
    body::strip_hop_by_hop(&mut headers);
    let frames = answer
        .bytes_stream()
        .map_ok(Frame::data)
        .map_err(|e| -> BoxError { Box::new(e) });
    let mut response = Response::new(StreamBody::new(frames).boxed());
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}
