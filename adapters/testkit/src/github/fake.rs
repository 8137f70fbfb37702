//! The fake GitHub: an HTTP server on loopback that answers the REST operations forge uses
//! (and the two GraphQL mutations), checks the bearer token, and holds every request to
//! GitHub's OpenAPI description — a request that is no operation of it, names an
//! undeclared query parameter or carries a body its schema refuses is recorded as a
//! violation and answered as GitHub would (404 or 422).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::openapi::OpenApi;
use super::state::{
    FakePull, Fault, GithubState, Recorded, check_run_json, comment_json, pull_json,
    review_comment_json, review_json,
};

struct Shared {
    contract: Arc<OpenApi>,
    token: String,
    state: Mutex<GithubState>,
}

/// A running fake GitHub; stops when dropped.
pub struct GithubFake {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for GithubFake {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl GithubFake {
    /// Starts on a free loopback port, accepting `token` only.
    ///
    /// # Errors
    /// The bind's error.
    pub async fn start(contract: Arc<OpenApi>, token: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            contract,
            token: token.to_owned(),
            state: Mutex::new(GithubState::default()),
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

    /// The REST API's base URL (`http://127.0.0.1:PORT`).
    pub fn api_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The state, to seed it or read it.
    pub fn state(&self) -> MutexGuard<'_, GithubState> {
        lock(&self.shared)
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

fn lock(shared: &Shared) -> MutexGuard<'_, GithubState> {
    shared
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn answer(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body)).into_response()
}

fn not_found() -> Response {
    answer(404, json!({"message": "Not Found"}))
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let text = String::from_utf8_lossy(&body).into_owned();
    let mut state = lock(&shared);
    state.requests.push(Recorded {
        method: method.to_string(),
        path: path_and_query.clone(),
        body: text.clone(),
    });
    let authorized = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("token "))
        })
        .is_some_and(|t| t == shared.token);
    if !authorized {
        return answer(401, json!({"message": "Bad credentials"}));
    }
    if let Some(Fault {
        status,
        headers,
        body,
    }) = state.faults.pop_front()
    {
        let mut response = answer(status, serde_json::from_str(&body).unwrap_or(json!({})));
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
    let path = uri.path();
    if path == "/graphql" {
        return graphql(&mut state, &text);
    }
    let violations = shared
        .contract
        .violations(method.as_str(), &path_and_query, &body);
    if !violations.is_empty() {
        let unknown = violations.iter().any(|v| v.contains("is no operation"));
        state.violations.extend(violations);
        return if unknown {
            not_found()
        } else {
            answer(422, json!({"message": "Invalid request."}))
        };
    }
    let json_body: Value = serde_json::from_str(&text).unwrap_or_default();
    let query = uri.query().unwrap_or_default();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    rest(&mut state, method.as_str(), &segments, query, &json_body)
}

/// The REST operations, by method and path (already known to be operations of the
/// description).
fn rest(state: &mut GithubState, method: &str, s: &[&str], query: &str, body: &Value) -> Response {
    let ["repos", owner, name, rest @ ..] = s else {
        return not_found();
    };
    let repo = format!("{owner}/{name}");
    let text = |key: &str| {
        body.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let number = |n: &str| n.parse::<u64>().unwrap_or(0);
    if method == "GET" {
        if let Some(list) = super::lists::list(state, &repo, rest, query) {
            return answer(200, list);
        }
    }
    match (method, rest) {
        ("GET", ["pulls"]) => {
            let head = query_value(query, "head");
            let open_only = query_value(query, "state").is_none_or(|s| s == "open");
            let found: Vec<Value> = state
                .pulls
                .iter()
                .filter(|p| p.repo == repo)
                .filter(|p| !open_only || p.state == "open")
                .filter(|p| {
                    head.as_ref()
                        .is_none_or(|h| *h == format!("{owner}:{}", p.head))
                })
                .map(pull_json)
                .collect();
            answer(200, Value::Array(found))
        }
        ("POST", ["pulls"]) => open_pull(state, &repo, owner, body),
        ("GET" | "PATCH", ["pulls", n]) => {
            let Some(p) = state
                .pulls
                .iter_mut()
                .find(|p| p.repo == repo && p.number == number(n))
            else {
                return not_found();
            };
            if method == "PATCH" {
                if let Some(t) = body.get("title").and_then(Value::as_str) {
                    t.clone_into(&mut p.title);
                }
                if let Some(b) = body.get("body").and_then(Value::as_str) {
                    b.clone_into(&mut p.body);
                }
            }
            answer(200, pull_json(p))
        }
        ("POST", ["issues", n, "comments"]) => {
            let id = state.id();
            let c = super::state::FakeComment {
                id,
                repo,
                number: number(n),
                author: "forge-bot".into(),
                body: text("body"),
            };
            let json = comment_json(&c);
            state.comments.push(c);
            answer(201, json)
        }
        ("GET", ["issues", n, "comments"]) => {
            let list = state
                .comments
                .iter()
                .filter(|c| c.repo == repo && c.number == number(n))
                .map(comment_json)
                .collect();
            answer(200, paged(list, query))
        }
        ("POST", ["pulls", n, "comments", c, "replies"]) => {
            reply_in_thread(state, repo, number(n), number(c), body)
        }
        ("GET", ["pulls", n, "comments"]) => {
            let list = state
                .review_comments
                .iter()
                .filter(|c| c.repo == repo && c.number == number(n))
                .map(review_comment_json)
                .collect();
            answer(200, paged(list, query))
        }
        ("GET", ["pulls", n, "reviews", r]) => state
            .reviews
            .iter()
            .find(|rv| rv.repo == repo && rv.number == number(n) && rv.id == number(r))
            .map_or_else(not_found, |rv| answer(200, review_json(rv))),
        ("GET", ["pulls", n, "reviews", r, "comments"]) => {
            let list = state
                .review_comments
                .iter()
                .filter(|c| {
                    c.repo == repo && c.number == number(n) && c.review_id == Some(number(r))
                })
                .map(review_comment_json)
                .collect();
            answer(200, paged(list, query))
        }
        ("GET", ["check-runs", id]) => state
            .check_runs
            .iter()
            .find(|c| c.repo == repo && c.id == number(id))
            .map_or_else(not_found, |c| answer(200, check_run_json(c))),
        ("GET", ["check-runs", id, "annotations"]) => {
            let Some(run) = state
                .check_runs
                .iter()
                .find(|c| c.repo == repo && c.id == number(id))
            else {
                return not_found();
            };
            let list = run
                .annotations
                .iter()
                .map(|(path, start, end, level, message)| {
                    json!({"path": path, "start_line": start, "end_line": end,
                           "annotation_level": level, "message": message})
                })
                .collect();
            answer(200, paged(list, query))
        }
        ("GET", ["collaborators", user, "permission"]) => {
            match state.permissions.get(&(repo, (*user).to_owned())) {
                None => answer(404, json!({"message": format!("{user} is not a user")})),
                Some(p) => answer(
                    200,
                    json!({"permission": p, "role_name": p, "user": {"login": user}}),
                ),
            }
        }
        _ => {
            // An operation of the description that the fake does not play: recorded, so a
            // test that reaches it fails saying which.
            state.violations.push(format!(
                "{method} /{} is not played by the fake",
                s.join("/")
            ));
            not_found()
        }
    }
}

/// `POST /repos/{owner}/{repo}/pulls`: one open pull request per head, as GitHub refuses a
/// second with 422.
fn open_pull(state: &mut GithubState, repo: &str, owner: &str, body: &Value) -> Response {
    let head = text_of(body, "head");
    if state
        .pulls
        .iter()
        .any(|p| p.repo == repo && p.head == head && p.state == "open")
    {
        return answer(
            422,
            json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom",
                "message": format!("A pull request already exists for {owner}:{head}.")}]}),
        );
    }
    let n = state.number(repo);
    let pull = FakePull {
        repo: repo.to_owned(),
        number: n,
        node_id: format!("PR_kw{n:06}"),
        head,
        base: text_of(body, "base"),
        title: text_of(body, "title"),
        body: text_of(body, "body"),
        draft: body.get("draft").and_then(Value::as_bool).unwrap_or(false),
        state: "open".into(),
        merged: false,
    };
    let json = pull_json(&pull);
    state.pulls.push(pull);
    answer(201, json)
}

/// `POST …/pulls/{n}/comments/{c}/replies`: a reply in the thread of review comment `c`.
fn reply_in_thread(
    state: &mut GithubState,
    repo: String,
    n: u64,
    c: u64,
    body: &Value,
) -> Response {
    let Some(root) = state
        .review_comments
        .iter()
        .find(|rc| rc.repo == repo && rc.number == n && rc.id == c)
        .cloned()
    else {
        return not_found();
    };
    let id = state.id();
    let reply = super::state::FakeReviewComment {
        id,
        repo,
        number: n,
        review_id: None,
        path: root.path,
        line: root.line,
        body: text_of(body, "body"),
        in_reply_to: Some(root.in_reply_to.unwrap_or(root.id)),
        author: "forge-bot".into(),
    };
    let json = review_comment_json(&reply);
    state.review_comments.push(reply);
    answer(201, json)
}

fn text_of(body: &Value, key: &str) -> String {
    body.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// GitHub's two draft mutations, by node id.
fn graphql(state: &mut GithubState, body: &str) -> Response {
    let request: Value = serde_json::from_str(body).unwrap_or_default();
    let query = request
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let id = request
        .pointer("/variables/id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let draft = if query.contains("markPullRequestReadyForReview") {
        false
    } else if query.contains("convertPullRequestToDraft") {
        true
    } else {
        state
            .violations
            .push(format!("graphql: a query the fake does not play: {query}"));
        return answer(200, json!({"errors": [{"message": "unknown query"}]}));
    };
    let Some(p) = state.pulls.iter_mut().find(|p| p.node_id == id) else {
        return answer(
            200,
            json!({"errors": [{"message": format!("Could not resolve to a node with the global id of '{id}'")}]}),
        );
    };
    p.draft = draft;
    let field = if draft {
        "convertPullRequestToDraft"
    } else {
        "markPullRequestReadyForReview"
    };
    answer(
        200,
        json!({"data": {field: {"pullRequest": {"isDraft": draft}}}}),
    )
}

pub(super) fn query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| v.replace("%3A", ":").replace("%2F", "/"))
    })
}

/// One page of `items` as `per_page` and `page` ask.
pub(super) fn paged(items: Vec<Value>, query: &str) -> Value {
    let per_page = query_value(query, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30usize);
    let page = query_value(query, "page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    Value::Array(
        items
            .into_iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .collect(),
    )
}
