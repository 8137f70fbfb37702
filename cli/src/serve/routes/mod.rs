//! The routes, one module per area, and the router that ties them to the middleware.

mod approvals;
pub(crate) mod board;
mod board_events;
#[cfg(test)]
mod board_tests;
mod chat;
mod events;
mod health;
mod metrics;
mod queue_approvals;
mod runs;
mod tasks;
mod web;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::{delete, get, post};

use super::auth::require_token;
use super::state::Shared;

/// Request bodies larger than this are refused (a prompt is text, not an upload).
const BODY_LIMIT: usize = 4 * 1024 * 1024;

pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/", get(web::index))
        .route("/assets/app.js", get(web::script))
        .route("/assets/app.css", get(web::style))
        .route("/assets/board.js", get(web::board_script))
        .route("/task/{id}", get(web::index))
        .route("/share/{token}", get(web::index))
        .route("/v1/providers", get(board::providers))
        .route("/v1/board", get(board::board))
        .route("/v1/board/events", get(board_events::board_events))
        .route("/v1/board/tasks/{id}", get(board::task))
        .route(
            "/v1/board/tasks/{id}/shares",
            post(board::create_share).get(board::list_shares),
        )
        .route("/v1/shares/{share_id}", delete(board::revoke_share))
        .route("/v1/shared/{token}", get(board::shared))
        .route("/v1/shared/{token}/events", get(board::shared_events))
        .route("/health", get(health::health))
        .route("/metrics", get(metrics::metrics))
        .route("/openapi.json", get(web::openapi))
        .route("/v1/info", get(web::info))
        .route("/v1/runs", post(runs::create).get(runs::list))
        .route("/v1/runs/{id}", get(runs::show).delete(runs::cancel))
        .route("/v1/runs/{id}/events", get(events::events))
        .route("/v1/tasks", post(tasks::submit).get(tasks::list))
        .route("/v1/tasks/{id}", get(tasks::show).delete(tasks::cancel))
        .route("/v1/tasks/{id}/events", get(tasks::events))
        .route("/api/chat", post(chat::chat))
        .route("/v1/approvals", get(approvals::list))
        .route("/v1/approvals/{id}", get(approvals::show))
        .route("/v1/approvals/{id}/approve", post(approvals::approve))
        .route("/v1/approvals/{id}/reject", post(approvals::reject))
        .layer(from_fn_with_state(state.clone(), require_token))
        .route_layer(from_fn_with_state(state.clone(), metrics::count_requests))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(BODY_LIMIT))
        .with_state(state)
}
