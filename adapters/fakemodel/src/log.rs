//! The request log: every request the server saw, in memory and optionally as JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::FakeModelError;

/// Headers that carry credentials are never logged.
const SECRET_HEADERS: &[&str] = &["authorization", "x-api-key", "x-goog-api-key", "cookie"];

/// One request as seen by the server, with what it was used for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedRequest {
    /// 0-based arrival order.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub timestamp_ms: u64,
    pub method: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// All headers except credentials.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON (a string when it was not JSON, null when empty).
    pub body: Value,
    /// `anthropic`, `open_ai` or `gemini`; none for other routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The conversation the request was accounted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// The scripted turn (0-based) this request was answered from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// Why the request was treated as a side call (no turn consumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_call: Option<String>,
    /// `served`, `failed <status>`, `cut`, `finished`, `side_call`, `health`, `not_found`.
    pub outcome: String,
    /// The token usage the response reported to the CLI, for responses that carried one
    /// (turns and side calls answered whole): what a run's usage is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ServedUsage>,
    /// The key the request carried, as its [`credential_digest`] (never the key itself): a
    /// test checks that the real key arrived (forge's sandbox adds it outside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
}

/// A digest of a key for the log (FNV-1a, 64 bits, in hex): the same key gives the same
/// digest, and the log never holds the key.
pub fn credential_digest(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a:{hash:016x}")
}

/// The key a request carries: `x-api-key`, `x-goog-api-key`, `authorization` (without
/// `Bearer `) or the `key` query parameter, as its digest.
pub fn request_credential(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let key = header("x-api-key")
        .or_else(|| header("x-goog-api-key"))
        .or_else(|| header("authorization").map(|v| v.strip_prefix("Bearer ").unwrap_or(v)))
        .or_else(|| query?.split('&').find_map(|pair| pair.strip_prefix("key=")))?;
    Some(credential_digest(key))
}

/// Tokens a response reported, as every vendor's usage block counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ServedUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Headers as a sorted map, credentials removed.
pub fn loggable_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| !SECRET_HEADERS.contains(&name.as_str()))
        .map(|(name, value)| {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), text)
        })
        .collect()
}

/// A body for the log: JSON when it parses, else the text.
pub fn loggable_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// In-memory log plus an optional JSONL file, appended as requests arrive.
#[derive(Debug)]
pub struct RequestLog {
    entries: Mutex<Vec<LoggedRequest>>,
    file: Option<Mutex<std::fs::File>>,
}

impl RequestLog {
    /// Open (append to) `path` when given.
    ///
    /// # Errors
    /// [`FakeModelError::Io`] when the file cannot be opened.
    pub fn open(path: Option<&PathBuf>) -> Result<Self, FakeModelError> {
        let file = match path {
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|err| {
                        FakeModelError::io(format!("open request log {}", path.display()), err)
                    })?;
                Some(Mutex::new(file))
            }
            None => None,
        };
        Ok(RequestLog {
            entries: Mutex::new(Vec::new()),
            file,
        })
    }

    /// Record one request; a failing log file is reported through tracing, not to the CLI.
    pub fn record(&self, mut entry: LoggedRequest) {
        let mut entries = self.lock_entries();
        entry.seq = entries.len() as u64;
        if let Some(file) = &self.file {
            let mut file = file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let written = serde_json::to_string(&entry)
                .map_err(std::io::Error::other)
                .and_then(|line| writeln!(file, "{line}"));
            if let Err(err) = written {
                tracing::warn!(%err, "fake model: could not append to the request log");
            }
        }
        entries.push(entry);
    }

    /// A copy of everything logged so far.
    pub fn snapshot(&self) -> Vec<LoggedRequest> {
        self.lock_entries().clone()
    }

    fn lock_entries(&self) -> std::sync::MutexGuard<'_, Vec<LoggedRequest>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logged_credential_is_a_digest_of_the_key_wherever_it_travels() {
        let check = |headers: &[(&str, &str)], query: Option<&str>, want: Option<&str>| {
            let mut map = HeaderMap::new();
            for (name, value) in headers {
                map.insert(
                    axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    value.parse().unwrap(),
                );
            }
            assert_eq!(
                request_credential(&map, query),
                want.map(credential_digest),
                "{headers:?} {query:?}"
            );
        };
        check(&[("x-api-key", "k1")], None, Some("k1"));
        check(&[("authorization", "Bearer k2")], None, Some("k2"));
        check(&[("x-goog-api-key", "k3")], Some("alt=sse"), Some("k3"));
        check(&[], Some("alt=sse&key=k4"), Some("k4"));
        // Look-alikes: not a key.
        check(&[("x-other", "k")], Some("apikey=k&monkey=k"), None);
        check(&[], None, None);
        assert_ne!(credential_digest("a"), credential_digest("b"));
        assert!(!credential_digest("sk-secret").contains("secret"));
    }
}
