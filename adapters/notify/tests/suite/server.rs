//! A local HTTP server that records what it was sent and answers from a script.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};

#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: serde_json::Value,
}

/// One scripted answer: status, body, and a delay before answering.
#[derive(Debug, Clone)]
pub(crate) struct Answer(pub u16, pub &'static str, pub Duration);

pub(crate) fn ok(body: &'static str) -> Answer {
    Answer(200, body, Duration::ZERO)
}

#[derive(Clone, Default)]
struct Shared {
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
}

pub(crate) struct Server {
    pub addr: SocketAddr,
    shared: Shared,
}

impl Server {
    /// Answers with `script` in order, then with the last answer again.
    pub(crate) async fn start(script: Vec<Answer>) -> Server {
        let shared = Shared {
            seen: Arc::default(),
            script: Arc::new(Mutex::new(script.into())),
        };
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Server { addr, shared }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

async fn handle(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    shared.seen.lock().unwrap().push(Seen {
        path: uri.path().to_owned(),
        authorization: headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned()),
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    });
    let answer = {
        let mut script = shared.script.lock().unwrap();
        if script.len() > 1 {
            script.pop_front().unwrap()
        } else {
            script.front().cloned().unwrap()
        }
    };
    tokio::time::sleep(answer.2).await;
    (StatusCode::from_u16(answer.0).unwrap(), answer.1.to_owned())
}

/// An address nothing listens on (bound, then released).
pub(crate) async fn down_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/hook")
}
