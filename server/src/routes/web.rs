//! The web page and the OpenAPI document, embedded in the binary (no build step).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::get;
    axum::Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(script))
        .route("/assets/app.css", get(style))
        .route("/assets/board.js", get(board_script))
        .route("/assets/permissions.js", get(permissions_script))
        .route("/task/{id}", get(index))
        .route("/share/{token}", get(index))
        .route("/openapi.json", get(openapi))
        .route("/v1/info", get(info))
}

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");
const BOARD: &str = include_str!("../assets/board.js");
const PERMISSIONS: &str = include_str!("../assets/permissions.js");
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

/// The page. A server with a queue opens it on the board (the team's page), one without
/// on the chat; the other view stays a tab away (`/#chat`, `/#board`).
pub async fn index(State(state): State<Shared>) -> Response {
    let page = if state.queue.is_some() {
        INDEX.replacen(HOME_CHAT, HOME_BOARD, 1)
    } else {
        INDEX.to_owned()
    };
    ([("content-type", "text/html; charset=utf-8")], page).into_response()
}

/// The page's `<body>`, naming the view `/` opens (`board.js` reads it).
const HOME_CHAT: &str = r#"<body data-home="chat">"#;
const HOME_BOARD: &str = r#"<body data-home="board">"#;

pub async fn script() -> Response {
    ([("content-type", "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub async fn board_script() -> Response {
    ([("content-type", "text/javascript; charset=utf-8")], BOARD).into_response()
}

pub async fn permissions_script() -> Response {
    (
        [("content-type", "text/javascript; charset=utf-8")],
        PERMISSIONS,
    )
        .into_response()
}

pub async fn style() -> Response {
    ([("content-type", "text/css; charset=utf-8")], STYLE).into_response()
}

pub async fn openapi() -> Response {
    ([("content-type", "application/json")], OPENAPI).into_response()
}

/// `GET /v1/info`: what the page needs to fill its pickers.
pub async fn info(State(state): State<Shared>) -> Json<Value> {
    Json(json!({
        "roots": state.roots.dirs(),
        "providers": forge_app::doctor::registered_names(&state.composition.registry()),
        "version": env!("CARGO_PKG_VERSION"),
    }))
}
