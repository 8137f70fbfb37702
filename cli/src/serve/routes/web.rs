//! The web page and the OpenAPI document, embedded in the binary (no build step).

use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

pub async fn index() -> Response {
    ([("content-type", "text/html; charset=utf-8")], INDEX).into_response()
}

pub async fn script() -> Response {
    ([("content-type", "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub async fn style() -> Response {
    ([("content-type", "text/css; charset=utf-8")], STYLE).into_response()
}

pub async fn openapi() -> Response {
    ([("content-type", "application/json")], OPENAPI).into_response()
}
