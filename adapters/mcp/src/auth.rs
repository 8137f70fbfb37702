//! Bearer-token check in front of the MCP service: only the run's CLI knows the token.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The one `Authorization` value the server accepts.
#[derive(Clone)]
pub struct Expected(pub Arc<str>);

pub async fn require_bearer(
    State(expected): State<Expected>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if presented.is_some_and(|token| constant_time_eq(token.as_bytes(), expected.0.as_bytes())) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "forge tool server: bad or missing bearer token",
        )
            .into_response()
    }
}

/// Compares in constant time (`subtle`), so timing tells nothing about the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

/// A fresh token: two v4 UUIDs (244 random bits from the OS).
pub fn fresh_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        let (a, b) = (fresh_token(), fresh_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
