//! Bearer-token check: every route but the page's assets and `/health` needs
//! `Authorization: Bearer <token>` when the server has a token. Compared in constant time.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::state::Shared;

/// Paths anyone may read: the web page (it asks for the token itself, also at a task's
/// or a share link's URL), the health check, and what a share link opens (its handler
/// checks the link's own secret).
pub fn is_public(path: &str) -> bool {
    path == "/"
        || path == "/health"
        || path.starts_with("/assets/")
        || path.starts_with("/task/")
        || path.starts_with("/share/")
        || path.starts_with("/v1/shared/")
        // Authenticated by the forge's signature instead (routes/webhooks.rs).
        || path == "/v1/webhooks/github"
        || path == "/v1/webhooks/gitlab"
}

/// Whether `headers` carry `Bearer <token>`.
pub fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else {
        return false;
    };
    given.trim().as_bytes().ct_eq(token.as_bytes()).into()
}

pub async fn require_token(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let Some(token) = &state.token else {
        return next.run(request).await;
    };
    if is_public(request.uri().path()) || authorized(request.headers(), token) {
        return next.run(request).await;
    }
    let mut response = ApiError {
        status: StatusCode::UNAUTHORIZED,
        kind: "unauthorized",
        message: "missing or wrong bearer token".into(),
    }
    .into_response();
    response.headers_mut().insert(
        "www-authenticate",
        axum::http::HeaderValue::from_static("Bearer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let check = |header: Option<&str>, expected: bool| {
            let mut headers = HeaderMap::new();
            if let Some(h) = header {
                headers.insert("authorization", h.parse().unwrap());
            }
            assert_eq!(authorized(&headers, "s3cret"), expected, "{header:?}");
        };
        check(Some("Bearer s3cret"), true);
        check(Some("Bearer s3cret "), true);
        check(None, false);
        check(Some("Bearer"), false);
        check(Some("Bearer "), false);
        check(Some("Bearer s3cre"), false);
        check(Some("Bearer s3cret2"), false);
        check(Some("bearer s3cret"), false);
        check(Some("Basic s3cret"), false);
        check(Some("s3cret"), false);
    }

    #[test]
    fn the_page_and_health_are_public_and_nothing_else() {
        for (path, public) in [
            ("/", true),
            ("/health", true),
            ("/assets/app.js", true),
            ("/v1/runs", false),
            ("/metrics", false),
            ("/openapi.json", false),
            ("/api/chat", false),
            ("/healthz", false),
            ("/index.html", false),
            ("/task/q-1", true),
            ("/share/sh-1.abc", true),
            ("/v1/shared/sh-1.abc", true),
            ("/v1/shared/sh-1.abc/events", true),
            ("/v1/board", false),
            ("/v1/board/tasks/q-1", false),
            ("/v1/board/tasks/q-1/shares", false),
            ("/v1/shares/sh-1", false),
            ("/v1/providers", false),
            ("/v1/sharedx", false),
            ("/v1/webhooks/github", true),
            ("/v1/webhooks/gitlab", true),
            ("/v1/webhooks/github/x", false),
            ("/v1/webhooks", false),
        ] {
            assert_eq!(is_public(path), public, "{path}");
        }
    }
}
