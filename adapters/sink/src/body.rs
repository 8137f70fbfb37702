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
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        ms % 1000
    )
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
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
