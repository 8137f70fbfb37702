//! The JSON body of one delivered event (the seed's shape).

use forge_domain::{AgentEvent, RunId, SessionId};
use serde_json::{Value, json};

/// `{session_id, interaction_id, event_type, event_data, timestamp}`.
pub fn event_body(
    run_id: &RunId,
    session_id: Option<&SessionId>,
    event: &AgentEvent,
    timestamp_ms: u64,
) -> Value {
    json!({
        "session_id": session_id.map(SessionId::as_str),
        "interaction_id": run_id.as_str(),
        "event_type": event.kind(),
        "event_data": event,
        "timestamp": rfc3339_ms(timestamp_ms),
    })
}

/// `2026-05-01T12:34:56.789Z` for milliseconds since the Unix epoch.
pub fn rfc3339_ms(ms: u64) -> String {
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        for (ms, expected) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
            (1_779_000_000_001, "2026-05-17T06:40:00.001Z"),
        ] {
            assert_eq!(rfc3339_ms(ms), expected);
        }
    }
}
