//! The routes, one module per area, and the router that ties them to the middleware.
//!
//! Adding a route is a one-file change: its handler and one `.route(…)` line in its area's
//! `routes()`. A new area is a new module here and one entry in [`AREAS`]. Routes need the
//! bearer token unless `auth::is_public` names their path.

mod approvals;
pub(crate) mod board;
mod board_events;
#[cfg(test)]
mod board_tests;
mod chat;
mod events;
mod health;
mod metrics;
mod permission_feed;
#[cfg(test)]
mod permission_feed_tests;
pub(crate) mod permissions;
#[cfg(test)]
mod permissions_tests;
mod queue_approvals;
mod runs;
mod tasks;
mod tasks_followup;
#[cfg(test)]
mod tasks_followup_tests;
mod web;
mod webhooks;
#[cfg(test)]
mod webhooks_tests;

use axum::Router;
use axum::middleware::from_fn_with_state;

use super::auth::require_token;
use super::state::Shared;

/// Request bodies larger than this are refused (a prompt is text, not an upload).
const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Every area's routes: the page, the board, runs and their events, the queue's tasks,
/// approvals, the seed's chat, health and metrics.
const AREAS: [fn() -> Router<Shared>; 12] = [
    web::routes,
    board::routes,
    board_events::routes,
    health::routes,
    metrics::routes,
    runs::routes,
    events::routes,
    tasks::routes,
    chat::routes,
    approvals::routes,
    permissions::routes,
    webhooks::routes,
];

pub fn router(state: Shared) -> Router {
    AREAS
        .iter()
        .fold(Router::new(), |router, area| router.merge(area()))
        .layer(from_fn_with_state(state.clone(), require_token))
        .route_layer(from_fn_with_state(state.clone(), metrics::count_requests))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(BODY_LIMIT))
        .with_state(state)
}
