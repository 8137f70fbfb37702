//! The JSON-RPC envelope of one stdout line, and the ids of forge's own requests.
//!
//! forge sends one request of each kind per run, so each has a fixed id: the decoder knows
//! which answer is which from the line alone.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{Error as RpcError, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;

pub const INITIALIZE: i64 = 0;
pub const SESSION: i64 = 1;
pub const SET_MODE: i64 = 2;
pub const PROMPT: i64 = 3;

/// The protocol version forge speaks.
pub const PROTOCOL: ProtocolVersion = ProtocolVersion::V1;

/// One message as it arrives: a request (`id` + `method`), a notification (`method`), or
/// an answer to one of forge's requests (`id` + `result` or `error`).
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    #[serde(default)]
    pub id: Option<RequestId>,
    #[serde(default, borrow)]
    pub method: Option<&'a str>,
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<RpcError>,
}

/// What a message is.
#[derive(Debug)]
pub enum Kind<'a> {
    /// The agent asks forge (`fs/read_text_file`, `session/request_permission`, …).
    Request(RequestId, &'a str),
    /// The agent tells (`session/update`).
    Notification(&'a str),
    /// The answer to forge's request `id`.
    Answer(i64, Result<&'a RawValue, RpcError>),
    /// An answer to no request of forge's.
    Stray,
}

impl<'a> Incoming<'a> {
    /// Reads `line`; `None` when it is not a JSON-RPC object.
    pub fn read(line: &'a str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }

    pub fn kind(&self) -> Kind<'a> {
        match (&self.id, self.method) {
            (Some(id), Some(method)) => Kind::Request(id.clone(), method),
            (None, Some(method)) => Kind::Notification(method),
            (Some(RequestId::Number(n)), None) => match (&self.error, self.result) {
                (Some(e), _) => Kind::Answer(*n, Err(e.clone())),
                (None, Some(r)) => Kind::Answer(*n, Ok(r)),
                (None, None) => Kind::Stray,
            },
            _ => Kind::Stray,
        }
    }

    /// The params read as `T` (a request or notification's payload).
    pub fn params<T: Deserialize<'a>>(&self) -> Option<T> {
        self.params.and_then(|p| serde_json::from_str(p.get()).ok())
    }
}

/// A request line.
pub fn request(id: i64, method: &str, params: &impl serde::Serialize) -> String {
    line(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// A notification line.
pub fn notification(method: &str, params: &impl serde::Serialize) -> String {
    line(&serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// The answer to the agent's request `id`.
pub fn answer(id: &RequestId, result: Result<serde_json::Value, RpcError>) -> String {
    match result {
        Ok(result) => line(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})),
        Err(error) => line(&serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error})),
    }
}

fn line(value: &serde_json::Value) -> String {
    value.to_string()
}

/// The agent's error as one line of text: its message, and its data when it has any.
pub fn describe(error: &RpcError) -> String {
    match &error.data {
        Some(data) => format!("{} ({data})", error.message),
        None => error.message.clone(),
    }
}
