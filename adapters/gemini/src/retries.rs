//! Gemini's retries, which it reports on stderr only (its stream-json has no retry event):
//!
//! ```text
//! Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,
//!   "details":[{"@type":"…RetryInfo","retryDelay":"0s"}],"message":"…","status":"RESOURCE_EXHAUSTED"}}
//! Attempt 2 failed. Retrying with backoff... Error: fetch failed
//! ```
//!
//! (`retryWithBackoff` in gemini-cli's core, 0.61.) Each such line becomes the same
//! [`AgentEvent::Retry`] the other providers give.

use forge_domain::AgentEvent;

use crate::stderr::strip_ansi;

/// The retry events of `stderr`, in order.
pub fn retries(stderr: &str) -> Vec<AgentEvent> {
    stderr
        .lines()
        .filter_map(|line| retry(&strip_ansi(line)))
        .collect()
}

/// One `Attempt N failed[ with status S]. Retrying …` line.
fn retry(line: &str) -> Option<AgentEvent> {
    let rest = line.trim_start().strip_prefix("Attempt ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let attempt: u32 = rest.get(..digits)?.parse().ok()?;
    let rest = rest.get(digits..)?.strip_prefix(" failed")?;
    let (status, rest) = match rest.strip_prefix(" with status ") {
        Some(after) => {
            let n = after.bytes().take_while(u8::is_ascii_digit).count();
            (after.get(..n)?.parse::<u16>().ok(), after.get(n..)?)
        }
        None => (None, rest),
    };
    let detail = rest
        .strip_prefix('.')?
        .trim_start()
        .strip_prefix("Retrying")?;
    let rate_limited = status == Some(429) || detail.contains("RESOURCE_EXHAUSTED");
    let cause = json_string(detail, "message")
        .map(str::to_owned)
        .or_else(|| status.map(|s| format!("http {s}")))
        .unwrap_or_else(|| "unknown error".to_owned());
    Some(AgentEvent::Retry {
        attempt: Some(attempt),
        max_attempts: None,
        delay_ms: json_string(detail, "retryDelay").and_then(delay_ms),
        http_status: status,
        rate_limited,
        message: format!("model request failed ({cause}); the cli will retry"),
    })
}

/// The value of the first `"key":"…"` in `text` (no escapes inside, as gemini prints these).
fn json_string<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let value = text.get(start..)?;
    let end = value.find('"')?;
    value.get(..end)
}

/// `"1.5s"` (protobuf Duration text) → 1500.
fn delay_ms(text: &str) -> Option<u64> {
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    (seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (line, attempt, status, delay ms, rate limited, message contains)
    type Want = (u32, Option<u16>, Option<u64>, bool, &'static str);

    fn check(line: &str, want: Option<Want>) {
        let got = retry(&strip_ansi(line)).map(|e| match e {
            AgentEvent::Retry {
                attempt,
                http_status,
                delay_ms,
                rate_limited,
                message,
                ..
            } => (
                attempt.unwrap_or(0),
                http_status,
                delay_ms,
                rate_limited,
                message,
            ),
            other => panic!("{other:?}"),
        });
        match (got, want) {
            (None, None) => {}
            (Some((a, s, d, r, m)), Some((wa, ws, wd, wr, wm))) => {
                assert_eq!((a, s, d, r), (wa, ws, wd, wr), "{line}");
                assert!(m.contains(wm), "{m} lacks {wm}: {line}");
            }
            (got, want) => panic!("{line}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn retry_lines_become_retry_events_and_look_alikes_do_not() {
        check(
            r#"Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}],"message":"rate limited, try again","status":"RESOURCE_EXHAUSTED"}}"#,
            Some((1, Some(429), Some(1500), true, "rate limited, try again")),
        );
        check(
            "Attempt 2 failed with status 503. Retrying with backoff... Error: unavailable",
            Some((2, Some(503), None, false, "http 503")),
        );
        check(
            "\u{1b}[33mAttempt 3 failed. Retrying with backoff... Error: fetch failed\u{1b}[0m",
            Some((3, None, None, false, "unknown error")),
        );
        // Look-alikes.
        check("Attempt 1 failed with status 400. Giving up.", None);
        check("Attempt to read the file failed. Retrying later", None);
        check("Attempts 1 failed. Retrying", None);
        check("    at retryWithBackoff (file://x.js:1:2)", None);
        check("Error: Attempt 1 failed. Retrying", None);
    }

    #[test]
    fn the_recorded_rate_limit_gives_one_retry() {
        let t = forge_testkit::fixtures::transcripts("gemini")
            .into_iter()
            .find(|t| t.scenario == "rate_limit_then_success")
            .expect("the recorded rate limit");
        let events = retries(&t.stderr);
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(matches!(
            events[0],
            AgentEvent::Retry {
                attempt: Some(1),
                http_status: Some(429),
                delay_ms: Some(0),
                rate_limited: true,
                ..
            }
        ));
    }
}
