//! Codex reports its own retries as top-level `error` events:
//! `{"type":"error","message":"Reconnecting... 2/5 (unexpected status 503 …)"}` (with `...` or
//! `…`). They are not failures: a run may well succeed afterwards.

use forge_domain::AgentEvent;

/// A `Retry` event when `message` is a reconnect notice, else `None`.
pub fn parse_reconnect(message: &str) -> Option<AgentEvent> {
    let rest = message.trim_start().strip_prefix("Reconnecting")?;
    let rest = rest.trim_start_matches(['.', '…', ' ']).trim_start();
    let (attempt, rest) = leading_number(rest)?;
    let rest = rest.strip_prefix('/')?;
    let (max, _) = leading_number(rest)?;
    let http_status = http_status(message);
    let lower_has_rate = message.to_ascii_lowercase().contains("rate limit");
    Some(AgentEvent::Retry {
        attempt: Some(attempt),
        max_attempts: Some(max),
        delay_ms: None,
        http_status,
        rate_limited: http_status == Some(429) || lower_has_rate,
        message: message.to_owned(),
    })
}

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

    fn check(message: &str, expected: Option<(u32, u32, Option<u16>, bool)>) {
        let got = parse_reconnect(message).map(|ev| match ev {
            AgentEvent::Retry {
                attempt,
                max_attempts,
                http_status,
                rate_limited,
                ..
            } => (
                attempt.unwrap(),
                max_attempts.unwrap(),
                http_status,
                rate_limited,
            ),
            other => panic!("not a retry: {other:?}"),
        });
        assert_eq!(got, expected, "{message}");
    }

    #[test]
    fn reconnect_notices() {
        check(
            "Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key, url: http://x/v1/responses)",
            Some((1, 5, Some(401), false)),
        );
        check("Reconnecting… 2/5", Some((2, 5, None, false)));
        check(
            "Reconnecting... 3/5 (exceeded retry limit, last status: 429 Too Many Requests)",
            Some((3, 5, Some(429), true)),
        );
        check("Reconnecting...", None);
        check("stream disconnected before completion", None);
        check("Reconnecting... x/5", None);
    }
}
