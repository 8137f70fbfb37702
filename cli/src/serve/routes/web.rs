//! The web page and the OpenAPI document, embedded in the binary (no build step).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::compose;
use crate::serve::state::Shared;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");
const BOARD: &str = include_str!("../assets/board.js");
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

pub async fn index() -> Response {
    ([("content-type", "text/html; charset=utf-8")], INDEX).into_response()
}

pub async fn script() -> Response {
    ([("content-type", "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub async fn board_script() -> Response {
    ([("content-type", "text/javascript; charset=utf-8")], BOARD).into_response()
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
        "providers": compose::provider_names(&compose::registry()),
        "version": env!("CARGO_PKG_VERSION"),
    }))
}
