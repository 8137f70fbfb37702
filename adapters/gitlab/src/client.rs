//! The HTTP side of the `gitlab` crate's endpoints: forge's own [`AsyncClient`] over
//! reqwest. The crate's `AsyncGitlab` asks `GET /user` when it is built, knows only
//! `https://HOST/api/v4` (no path prefix, no port over plain HTTP without `insecure`) and
//! does not wait out a 429; this client sends each request to the configured `api_url` with
//! the `PRIVATE-TOKEN` header, retries a rate limit after `Retry-After` (or
//! `RateLimit-Reset`), and keeps the token out of every error it returns.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bytes::Bytes;
use gitlab::api::{ApiError, AsyncClient, RestClient};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use url::Url;

/// How many times one request is sent at most (the first try and two retries).
const TRIES: u32 = 3;
/// The longest forge waits for a rate limit to pass before it gives up.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// The wait before a retry when the forge names none.
const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// What went wrong on the way to GitLab (never with the token in it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TransportError(pub(crate) String);

/// An authenticated GitLab API at one base URL.
#[derive(Clone)]
pub(crate) struct Client {
    http: reqwest::Client,
    /// `https://HOST/api/v4/`: with the trailing slash, so that joining an endpoint keeps
    /// the base's path.
    base: Url,
    token: HeaderValue,
    /// The token's text, to mask it wherever an error might quote it.
    secret: Arc<str>,
}

impl Client {
    /// A client for `api_url` (`https://HOST/api/v4`) sending `token`.
    pub(crate) fn new(api_url: &str, token: &str) -> Result<Self, String> {
        let base = Url::parse(&format!("{}/", api_url.trim_end_matches('/')))
            .map_err(|e| format!("gitlab api_url {api_url:?}: {e}"))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(format!("gitlab api_url {api_url:?}: not an http(s) URL"));
        }
        let mut header = HeaderValue::from_str(token)
            .map_err(|_| "the gitlab token holds characters a header cannot carry".to_owned())?;
        // Debug output of the request (reqwest, hyper) shows `Sensitive` instead.
        header.set_sensitive(true);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| format!("building the HTTP client: {e}"))?;
        Ok(Self {
            http,
            base,
            token: header,
            secret: Arc::from(token),
        })
    }

    /// `text` with the token masked.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.secret.is_empty() {
            return text.to_owned();
        }
        text.replace(&*self.secret, "[REDACTED]")
    }

    fn transport(&self, what: &str, e: &dyn std::error::Error) -> ApiError<TransportError> {
        let mut text = format!("{what}: {e}");
        let mut source = e.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        ApiError::client(TransportError(self.redact(&text)))
    }
}

impl RestClient for Client {
    type Error = TransportError;

    fn rest_endpoint(&self, endpoint: &str) -> Result<Url, ApiError<Self::Error>> {
        Ok(self.base.join(endpoint)?)
    }
}

#[async_trait]
impl AsyncClient for Client {
    async fn rest_async(
        &self,
        request: http::request::Builder,
        body: Vec<u8>,
    ) -> Result<http::Response<Bytes>, ApiError<Self::Error>> {
        let (parts, ()) = request
            .body(())
            .map_err(|e| self.transport("building the request", &e))?
            .into_parts();
        let url = parts.uri.to_string();
        let mut tries = 0;
        loop {
            tries += 1;
            let last = tries >= TRIES;
            let sent = self
                .http
                .request(parts.method.clone(), url.as_str())
                .headers(parts.headers.clone())
                .header("PRIVATE-TOKEN", self.token.clone())
                .body(body.clone())
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                // Not sent at all: safe to send again, whatever the method.
                Err(e) if e.is_connect() && !last => {
                    tokio::time::sleep(DEFAULT_WAIT).await;
                    continue;
                }
                Err(e) => return Err(self.transport("sending the request", &e)),
            };
            let status = response.status();
            if !last && retryable(&parts.method, status) {
                tokio::time::sleep(wait(response.headers(), SystemTime::now())).await;
                continue;
            }
            let mut answer = http::Response::builder().status(status);
            if let Some(headers) = answer.headers_mut() {
                headers.extend(response.headers().clone());
            }
            let bytes = response
                .bytes()
                .await
                .map_err(|e| self.transport("reading the answer", &e))?;
            return answer
                .body(bytes)
                .map_err(|e| self.transport("reading the answer", &e));
        }
    }
}

/// A 429 was not acted on, so any request may be sent again; a 502/503/504 may have been
/// (a merge request opened, its answer lost), so only a read is.
fn retryable(method: &Method, status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS
        || (method == Method::GET
            && matches!(
                status,
                StatusCode::BAD_GATEWAY
                    | StatusCode::SERVICE_UNAVAILABLE
                    | StatusCode::GATEWAY_TIMEOUT
            ))
}

/// How long to wait before the next try: `Retry-After` (seconds), else `RateLimit-Reset`
/// (a Unix time), else a second; never more than [`MAX_WAIT`].
pub(crate) fn wait(headers: &HeaderMap, now: SystemTime) -> Duration {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let wait = if let Some(seconds) = number("retry-after") {
        Duration::from_secs(seconds)
    } else if let Some(reset) = number("ratelimit-reset") {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        Duration::from_secs(reset).saturating_sub(now)
    } else {
        DEFAULT_WAIT
    };
    wait.min(MAX_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(headers: &[(&str, &str)], want: u64) {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(wait(&map, now), Duration::from_secs(want), "{headers:?}");
    }

    #[test]
    fn waits_as_long_as_gitlab_says_within_a_minute() {
        check(&[("Retry-After", "2")], 2);
        check(&[("Retry-After", "0")], 0);
        check(&[("Retry-After", "3600")], 60);
        check(&[("RateLimit-Reset", "1005")], 5);
        check(&[("RateLimit-Reset", "900")], 0);
        check(&[("Retry-After", "3"), ("RateLimit-Reset", "1030")], 3);
        // An HTTP date is not a number of seconds: the default.
        check(&[("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")], 1);
        check(&[], 1);
    }

    #[test]
    fn what_is_retried() {
        assert!(retryable(&Method::POST, StatusCode::TOO_MANY_REQUESTS));
        assert!(retryable(&Method::GET, StatusCode::BAD_GATEWAY));
        assert!(!retryable(&Method::POST, StatusCode::BAD_GATEWAY));
        assert!(!retryable(&Method::PUT, StatusCode::SERVICE_UNAVAILABLE));
        assert!(!retryable(&Method::GET, StatusCode::INTERNAL_SERVER_ERROR));
        assert!(!retryable(&Method::GET, StatusCode::UNAUTHORIZED));
    }

    #[test]
    fn the_base_keeps_its_path_and_the_token_is_masked() {
        let c = Client::new("https://gl.example/prefix/api/v4/", "glpat-secret").unwrap();
        let url = c.rest_endpoint("projects/a%2Fb/merge_requests").unwrap();
        assert_eq!(
            url.as_str(),
            "https://gl.example/prefix/api/v4/projects/a%2Fb/merge_requests"
        );
        assert_eq!(c.redact("bad glpat-secret here"), "bad [REDACTED] here");
        assert!(Client::new("ftp://gl.example", "t").is_err());
        assert!(Client::new("https://gl.example", "bad\ntoken").is_err());
    }
}
