//! The JSON-RPC envelope of one stdout line, and the ids of forge's own requests.
//!
//! forge sends one request of each kind per run (a `session/new` retried after
//! `authenticate` keeps its id), so each has a fixed id: the answer says which it is.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{Error as RpcError, RequestId};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::value::RawValue;

pub const INITIALIZE: i64 = 0;
pub const SESSION: i64 = 1;
pub const SET_MODE: i64 = 2;
pub const PROMPT: i64 = 3;
pub const AUTHENTICATE: i64 = 4;

/// The protocol version forge speaks.
pub const PROTOCOL: ProtocolVersion = ProtocolVersion::V1;

/// One message as it arrives: a request (`id` + `method`), a notification (`method`), or
/// an answer (`id` + `result` or `error`).
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default, borrow)]
    method: Option<&'a str>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// What a message is.
#[derive(Debug)]
pub enum Kind<'a> {
    /// The agent asks forge (`fs/read_text_file`, `session/request_permission`, …): its
    /// id, method and params.
    Request(RequestId, &'a str, &'a str),
    /// The agent tells (`session/update`); its params.
    Notification(&'a str, &'a str),
    /// The answer to forge's request `id`.
    Answer(i64, Result<&'a str, RpcError>),
    /// An answer to no request of forge's.
    Stray,
}

/// Reads `line`: `None` when it is not a JSON-RPC object.
pub fn read(line: &str) -> Option<Kind<'_>> {
    let m: Incoming<'_> = serde_json::from_str(line).ok()?;
    let params = m.params.map_or("null", RawValue::get);
    Some(match (m.id, m.method) {
        (Some(id), Some(method)) => Kind::Request(id, method, params),
        (None, Some(method)) => Kind::Notification(method, params),
        (Some(RequestId::Number(n)), None) => match (m.error, m.result) {
            (Some(e), _) => Kind::Answer(n, Err(e)),
            (None, Some(r)) => Kind::Answer(n, Ok(r.get())),
            (None, None) => Kind::Stray,
        },
        _ => Kind::Stray,
    })
}

/// A request line.
pub fn request(id: i64, method: &str, params: &impl Serialize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A notification line.
pub fn notification(method: &str, params: &impl Serialize) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// The answer to the agent's request `id`.
pub fn answer(id: &RequestId, result: Result<serde_json::Value, RpcError>) -> String {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
    .to_string()
}

/// The agent's error as one line of text: its message, and its data when it has any.
pub fn describe(error: &RpcError) -> String {
    match &error.data {
        Some(data) => format!("{} ({data})", error.message),
        None => error.message.clone(),
    }
}

/// An SDK enum read as the domain's enum of the same names (its default, `Other`, for a
/// name it does not know).
pub fn named<T: DeserializeOwned + Default>(value: impl Serialize) -> T {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .unwrap_or_default()
}

/// The params of an agent's request, read as `T`.
pub fn parse<T: DeserializeOwned>(params: &str) -> Result<T, RpcError> {
    serde_json::from_str(params).map_err(|e| RpcError::invalid_params().data(e.to_string()))
}

/// A schema value as JSON (they always serialise).
pub fn to_value(value: impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}
