//! The fake GitLab: an HTTP server on loopback under `/api/v4` that checks the token
//! (`PRIVATE-TOKEN`, or `Authorization: Bearer`, as GitLab takes both), holds every request
//! to the documented routes (`contract.rs`) and answers the ones forge uses as GitLab does
//! (`routes.rs`). Anything else is a 404 and a recorded violation.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::contract;
use super::routes;
use super::state::{Fault, GitlabState, Recorded};

struct Shared {
    token: String,
    state: Mutex<GitlabState>,
}

/// A running fake GitLab; stops when dropped.
pub struct GitlabFake {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for GitlabFake {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl GitlabFake {
    /// Starts on a free loopback port, accepting `token` only; web URLs name `host`, and
    /// what the token writes is written by user `forge-bot`.
    ///
    /// # Errors
    /// The bind's error.
    pub async fn start(host: &str, token: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            state: Mutex::new(GitlabState::new(host, "forge-bot")),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            addr,
            shared,
            server,
        })
    }

    /// The API's base URL (`http://127.0.0.1:PORT/api/v4`).
    pub fn api_url(&self) -> String {
        format!("http://{}/api/v4", self.addr)
    }

    /// The state, to seed it or read it.
    pub fn state(&self) -> MutexGuard<'_, GitlabState> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The requests that broke the contract.
    pub fn violations(&self) -> Vec<String> {
        self.state().violations.clone()
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    /// The next request is answered with `fault` instead.
    pub fn fail_next(&self, fault: Fault) {
        self.state().faults.push_back(fault);
    }
}

pub(super) fn answer(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body)).into_response()
}

/// The query's and the body's parameters, decoded, `key[]` as `key`; the body is form-encoded
/// or JSON (GitLab takes both). `Err`: a body the fake cannot read.
fn parameters(
    query: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Vec<(String, String)>, String> {
    let mut params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if !body.is_empty() {
        let mime = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if mime.starts_with("application/x-www-form-urlencoded") {
            params.extend(
                url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())),
            );
        } else if mime.starts_with("application/json") {
            let v: Value = serde_json::from_slice(body)
                .map_err(|e| format!("a JSON body that is not JSON: {e}"))?;
            for (k, v) in v.as_object().into_iter().flatten() {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                params.push((k.clone(), text));
            }
        } else {
            return Err(format!("a body of type {mime:?}"));
        }
    }
    for (k, _) in &mut params {
        if let Some(base) = k.strip_suffix("[]") {
            *k = base.to_owned();
        }
    }
    Ok(params)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let mut state = shared
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    state.requests.push(Recorded {
        method: method.to_string(),
        path: path_and_query.clone(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (auth, token) = match (header("private-token"), header("authorization")) {
        (Some(t), _) => ("private-token", Some(t)),
        (None, Some(a)) => ("bearer", a.strip_prefix("Bearer ")),
        (None, None) => ("none", None),
    };
    state.auth.push(auth);
    if token != Some(shared.token.as_str()) {
        return answer(401, json!({"message": "401 Unauthorized"}));
    }
    if let Some(Fault {
        status,
        headers,
        body,
    }) = state.faults.pop_front()
    {
        let mut response = (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body,
        )
            .into_response();
        for (name, value) in headers {
            if let (Ok(name), Ok(value)) = (
                axum::http::HeaderName::try_from(name),
                axum::http::HeaderValue::try_from(value),
            ) {
                response.headers_mut().insert(name, value);
            }
        }
        return response;
    }
    let call = format!("{method} {}", uri.path());
    let Some(path) = uri.path().strip_prefix("/api/v4/") else {
        state.violations.push(format!("{call}: not below /api/v4"));
        return answer(404, json!({"error": "404 Not Found"}));
    };
    let Some((route, vars)) = contract::find(method.as_str(), path) else {
        state.violations.push(format!(
            "{call} is no route of GitLab's v4 API the fake knows"
        ));
        return answer(404, json!({"error": "404 Not Found"}));
    };
    let params = match parameters(uri.query().unwrap_or_default(), &headers, &body) {
        Ok(params) => params,
        Err(why) => {
            state.violations.push(format!("{call}: {why}"));
            return answer(400, json!({"error": "400 Bad request"}));
        }
    };
    let checked = contract::check(route, &params);
    for name in checked.unknown {
        state.violations.push(format!(
            "{call}: parameter {name:?} is not documented for {} /{} (GitLab ignores it)",
            route.method, route.path
        ));
    }
    if let Some(error) = checked.refusal {
        state.violations.push(format!("{call}: {error}"));
        return answer(400, json!({"error": error}));
    }
    let vars: Vec<String> = vars.iter().map(|v| percent_decoded(v)).collect();
    routes::serve(&mut state, route.method, route.path, &vars, &params)
}

/// A path segment's `%XX` escapes decoded (`group%2Fproject` → `group/project`).
fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
