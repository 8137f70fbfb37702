//! `POST /v1/webhooks/github` and `/v1/webhooks/gitlab` (issue 39): a forge's webhooks,
//! without the bearer token but authenticated by the forge's own signature (GitHub: HMAC
//! SHA-256 of the raw body in `X-Hub-Signature-256`; GitLab: `X-Gitlab-Token`), checked
//! before the body is read. A delivery nobody's secret authenticates is 401 and nothing
//! happens; a malformed payload 400; anything authenticated 202 with what it came to — a
//! repository no forge serves (logged), a redelivery (its id seen before), an event that
//! asks nothing, a reader's comment, or what forge queued.

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use forge_app::forges::FeedbackOutcome;
use forge_domain::forges::ForgeKind;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::Shared;

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/v1/webhooks/github", post(github))
        .route("/v1/webhooks/gitlab", post(gitlab))
}

/// Each forge's header names: signature, event, delivery id.
fn headers_of(kind: ForgeKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        ForgeKind::Github => ("x-hub-signature-256", "x-github-event", "x-github-delivery"),
        ForgeKind::Gitlab => ("x-gitlab-token", "x-gitlab-event", "x-gitlab-event-uuid"),
    }
}

async fn github(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    receive(&state, ForgeKind::Github, &headers, &body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

async fn gitlab(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    receive(&state, ForgeKind::Gitlab, &headers, &body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

fn unauthorized(message: &str) -> ApiError {
    ApiError {
        status: StatusCode::UNAUTHORIZED,
        kind: "unauthorized",
        message: message.to_owned(),
    }
}

async fn receive(
    state: &Shared,
    kind: ForgeKind,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let (signature, event, delivery) = headers_of(kind);
    let Some(feedback) = state.composition.forge_feedback() else {
        return Err(unauthorized(
            "this server takes no webhooks: run `serve --queue` with a [forges.NAME] whose \
             webhook_secret_env is set",
        ));
    };
    if feedback
        .authenticate(kind, header(headers, signature), body)
        .is_none()
    {
        return Err(unauthorized(&format!(
            "{signature} does not authenticate the delivery with any {} forge's webhook secret",
            kind.as_str()
        )));
    }
    let event = header(headers, event)
        .ok_or_else(|| ApiError::bad_request(format!("{event} is missing")))?;
    let events = feedback
        .decode(kind, event, body)
        .map_err(ApiError::bad_request)?;
    // GitLab sends no delivery id on older versions: the body itself is then the id (a
    // redelivery is byte-identical).
    let id = header(headers, delivery).map_or_else(
        || {
            let digest = Sha256::digest(body);
            digest.iter().map(|b| format!("{b:02x}")).collect()
        },
        str::to_owned,
    );
    let outcomes = feedback
        .deliver(kind, &id, &events)
        .await
        .map_err(|e| ApiError {
            status: StatusCode::BAD_GATEWAY,
            kind: "forge",
            message: format!("acting on delivery {id}: {e}"),
        })?;
    for outcome in &outcomes {
        if let FeedbackOutcome::NoForge { host } = outcome {
            state.runtime.logger.warn(&format!(
                "webhook {id} ({event}): no [forges.NAME] of kind {} serves {host}; ignored",
                kind.as_str()
            ));
        }
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"delivery": id, "outcomes": outcomes})),
    )
        .into_response())
}
