//! The `gitlab` crate's errors as forge's: a refusal GitLab understood (400, 404, 405, 409,
//! 422) is [`ForgeError::InvalidRequest`]; anything else — unreachable, 401/403, a rate
//! limit that outlasted the retries, a 5xx, an answer that is not what it should be — is
//! [`ForgeError::Io`]. Both name what forge was doing, the status and GitLab's own message.

use forge_domain::ForgeError;
use gitlab::api::ApiError;
use serde_json::Value;

use crate::client::TransportError;

/// The most of an answer's text an error quotes.
const QUOTE_MAX: usize = 300;

/// The HTTP status an error carries, if it came from an answer.
pub(crate) fn status(e: &ApiError<TransportError>) -> Option<u16> {
    match e {
        ApiError::GitlabWithStatus { status, .. }
        | ApiError::GitlabService { status, .. }
        | ApiError::GitlabObjectWithStatus { status, .. }
        | ApiError::GitlabUnrecognizedWithStatus { status, .. } => Some(status.as_u16()),
        ApiError::GitlabRateLimited { .. } => Some(429),
        _ => None,
    }
}

/// `e`, met while doing `what`, as forge's error; `redact` masks the token.
pub(crate) fn forge_error(
    what: &str,
    e: &ApiError<TransportError>,
    redact: impl Fn(&str) -> String,
) -> ForgeError {
    let message = match e {
        ApiError::GitlabWithStatus { status, msg } => with_status(status.as_u16(), msg),
        ApiError::GitlabObjectWithStatus { status, obj }
        | ApiError::GitlabUnrecognizedWithStatus { status, obj } => {
            with_status(status.as_u16(), &reason(obj))
        }
        ApiError::GitlabService { status, data } => {
            let text = String::from_utf8_lossy(data);
            with_status(status.as_u16(), &quote(text.trim()))
        }
        ApiError::GitlabRateLimited { .. } => "429 rate limited, still after retrying".to_owned(),
        other => other.to_string(),
    };
    let message = redact(message.trim_end());
    match status(e) {
        Some(400 | 404 | 405 | 409 | 422) => ForgeError::InvalidRequest {
            reason: format!("gitlab: {what}: {message}"),
        },
        _ => ForgeError::Io {
            context: format!("gitlab: {what}"),
            message,
        },
    }
}

/// GitLab's message on one line: a string, a list of strings, field → messages, or a
/// whole body holding `message` or `error`.
fn reason(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join("; "),
        Value::Object(fields) => match fields.get("message").or_else(|| fields.get("error")) {
            Some(inner) => return reason(inner),
            None => fields
                .iter()
                .map(|(field, said)| match said {
                    Value::Array(items) => format!(
                        "{field} {}",
                        items
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    other => format!("{field} {}", other.as_str().unwrap_or(&other.to_string())),
                })
                .collect::<Vec<_>>()
                .join("; "),
        },
        other => other.to_string(),
    };
    quote(&text)
}

/// `404 Not found` once, though GitLab's own message already starts with its status.
fn with_status(status: u16, message: &str) -> String {
    let code = status.to_string();
    if message.starts_with(&code) {
        message.to_owned()
    } else {
        format!("{code} {message}")
    }
}

fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE_MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(QUOTE_MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use serde_json::json;

    use super::*;

    fn check(e: ApiError<TransportError>, want: &str) {
        let got = forge_error("opening a merge request", &e, |t| {
            t.replace("glpat-1", "***")
        });
        let got = match got {
            ForgeError::InvalidRequest { reason } => format!("invalid: {reason}"),
            other => format!("io: {other}"),
        };
        assert_eq!(got, want);
    }

    /// As the crate builds it from an answer's body.
    fn with(status: u16, body: Value) -> ApiError<TransportError> {
        let status = StatusCode::from_u16(status).unwrap();
        match body.get("message").or_else(|| body.get("error")) {
            Some(Value::String(msg)) => ApiError::GitlabWithStatus {
                status,
                msg: msg.clone(),
            },
            Some(obj) => ApiError::GitlabObjectWithStatus {
                status,
                obj: obj.clone(),
            },
            None => ApiError::GitlabUnrecognizedWithStatus { status, obj: body },
        }
    }

    #[test]
    fn refusals_and_failures() {
        check(
            with(
                409,
                json!({"message": ["Another open merge request already exists for this source branch: !1"]}),
            ),
            "invalid: gitlab: opening a merge request: 409 Another open merge request already exists for this source branch: !1",
        );
        check(
            with(400, json!({"error": "title is missing"})),
            "invalid: gitlab: opening a merge request: 400 title is missing",
        );
        check(
            with(
                422,
                json!({"message": {"target_branch": ["is invalid", "is missing"]}}),
            ),
            "invalid: gitlab: opening a merge request: 422 target_branch is invalid, is missing",
        );
        check(
            with(404, json!({"message": "404 Project Not Found"})),
            "invalid: gitlab: opening a merge request: 404 Project Not Found",
        );
        check(
            with(401, json!({"message": "401 Unauthorized"})),
            "io: gitlab: opening a merge request: 401 Unauthorized",
        );
        check(
            ApiError::GitlabService {
                status: StatusCode::BAD_GATEWAY,
                data: b"<html>bad gateway glpat-1</html>".to_vec(),
            },
            "io: gitlab: opening a merge request: 502 <html>bad gateway ***</html>",
        );
        check(
            ApiError::client(TransportError("connection refused".into())),
            "io: gitlab: opening a merge request: client error: connection refused",
        );
        check(
            with(500, json!({"unexpected": true})),
            "io: gitlab: opening a merge request: 500 unexpected true",
        );
    }
}
