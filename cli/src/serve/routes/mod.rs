//! The routes, one module per area, and the router that ties them to the middleware.

mod approvals;
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
use axum::routing::{get, post};

use super::auth::require_token;
use super::state::Shared;

/// Request bodies larger than this are refused (a prompt is text, not an upload).
const BODY_LIMIT: usize = 4 * 1024 * 1024;

pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/", get(web::index))
        .route("/assets/app.js", get(web::script))
        .route("/assets/app.css", get(web::style))
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
