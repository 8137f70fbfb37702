//! Codex reports its own retries as top-level `error` events:
//! `{"type":"error","message":"Reconnecting... 2/5 (unexpected status 503 …)"}` (with `...` or
//! `…`). They are not failures: a run may well succeed afterwards.

use forge_domain::AgentEvent;

/// A `Retry` event when `message` is a reconnect notice, else `None`. The count is optional:
/// with the model server unreachable 0.169 prints `Reconnecting... waiting for network (…)`.
pub fn parse_reconnect(message: &str) -> Option<AgentEvent> {
    let rest = message.trim_start().strip_prefix("Reconnecting")?;
    let rest = rest.trim_start_matches(['.', '…', ' ']);
    let counts = leading_number(rest).and_then(|(attempt, rest)| {
        let (max, _) = leading_number(rest.strip_prefix('/')?)?;
        Some((attempt, max))
    });
    let http_status = http_status(message);
    let rate_limited = http_status == Some(429)
        || message
            .as_bytes()
            .windows(RATE_LIMIT.len())
            .any(|w| w.eq_ignore_ascii_case(RATE_LIMIT));
    Some(AgentEvent::Retry {
        attempt: counts.map(|c| c.0),
        max_attempts: counts.map(|c| c.1),
        delay_ms: None,
        http_status,
        rate_limited,
        message: message.to_owned(),
    })
}

/// Said by notices of a rate limit without a 429 status (any case).
const RATE_LIMIT: &[u8] = b"rate limit";

fn leading_number(text: &str) -> Option<(u32, &str)> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let n = text[..end].parse().ok()?;
    Some((n, &text[end..]))
}

/// The status in `… status 429 Too Many Requests …` or `… last status: 429 …` (how Codex
/// words HTTP failures).
fn http_status(message: &str) -> Option<u16> {
    message.match_indices("status").find_map(|(at, word)| {
        let rest = message[at + word.len()..].trim_start_matches([':', ' ']);
        let (code, after) = leading_number(rest)?;
        let plain = after.is_empty() || after.starts_with([' ', ',', ')']);
        (plain && (100..600).contains(&code)).then_some(code as u16)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// attempt, max attempts, HTTP status, rate limited.
    type Facts = (Option<u32>, Option<u32>, Option<u16>, bool);

    fn check(message: &str, expected: Option<Facts>) {
        let got = parse_reconnect(message).map(|ev| match ev {
            AgentEvent::Retry {
                attempt,
                max_attempts,
                http_status,
                rate_limited,
                ..
            } => (attempt, max_attempts, http_status, rate_limited),
            other => panic!("not a retry: {other:?}"),
        });
        assert_eq!(got, expected, "{message}");
    }

    #[test]
    fn reconnect_notices() {
        check(
            "Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key, url: http://x/v1/responses)",
            Some((Some(1), Some(5), Some(401), false)),
        );
        check("Reconnecting… 2/5", Some((Some(2), Some(5), None, false)));
        check(
            "Reconnecting... 3/5 (exceeded retry limit, last status: 429 Too Many Requests)",
            Some((Some(3), Some(5), Some(429), true)),
        );
        check(
            "Reconnecting... waiting for network (Connection failed: error sending request)",
            Some((None, None, None, false)),
        );
        check("Reconnecting...", Some((None, None, None, false)));
        check("Reconnecting... 3/", Some((None, None, None, false)));
        check("stream disconnected before completion", None);
        check("Connection failed. Reconnecting later", None);
    }
}
