//! Gemini's retries, which it reports on stderr only (its stream-json has no retry event).
//! `retryWithBackoff` in gemini-cli's core (0.61) prints two shapes:
//!
//! ```text
//! Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,
//!   "details":[],"message":"…","status":"RESOURCE_EXHAUSTED"}}
//! Attempt 2 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request
//! Attempt 3 failed with 429 error (no Retry-After header). Retrying with backoff...
//! Attempt 4 failed with 5xx error. Retrying with backoff...
//! ```
//!
//! for errors it backs off from by itself (HTTP 429 and 5xx, network errors), and, for a
//! quota error whose `RetryInfo` suggests a delay, the error's message — which has a line
//! break in it — followed by the delay it actually waits:
//!
//! ```text
//! Attempt 1 failed: Resource has been exhausted (e.g. check quota).
//! Suggested retry after 1s.. Retrying after 5118ms...
//! ```
//!
//! Each becomes the same [`AgentEvent::Retry`] the other providers give. Recorded lines:
//! `adapters/testkit/fixtures/gemini-retries/`.

use std::collections::VecDeque;

use forge_domain::AgentEvent;

use crate::stderr::strip_ansi;

/// How many lines a quota error's message may span before `Retrying after …ms...`.
const MAX_MESSAGE_LINES: usize = 4;

/// The retry events of `stderr`, in order.
pub fn retries(stderr: &str) -> Vec<AgentEvent> {
    let mut reader = RetryLines::default();
    stderr
        .lines()
        .filter_map(|line| reader.push(line))
        .collect()
}

/// gemini's stderr read line by line as it is written: each retry event as soon as the last
/// line of its report is in.
#[derive(Debug, Default)]
pub struct RetryLines {
    /// The last lines, as long as a quota error's report may be.
    window: VecDeque<String>,
}

impl RetryLines {
    /// The retry event that `line` completes, if any.
    pub fn push(&mut self, line: &str) -> Option<AgentEvent> {
        let line = strip_ansi(line);
        if let Some(event) = retry(&line) {
            // A report of its own: no quota report spans it.
            self.window.clear();
            return Some(event);
        }
        self.window.push_back(line);
        if self.window.len() > MAX_MESSAGE_LINES + 1 {
            self.window.pop_front();
        }
        let lines: Vec<String> = self.window.iter().cloned().collect();
        let last = lines.len() - 1;
        // The quota report that ends on this line (one that ended earlier was given then).
        (0..lines.len()).find_map(|start| {
            quota_retry(&lines[start..])
                .filter(|(_, end)| start + end == last)
                .map(|(event, _)| event)
        })
    }
}

/// `Attempt N` at the start of `line`: the attempt and the rest.
fn attempt(line: &str) -> Option<(u32, &str)> {
    let rest = line.trim_start().strip_prefix("Attempt ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let attempt: u32 = rest.get(..digits)?.parse().ok()?;
    Some((attempt, rest.get(digits..)?))
}

/// One `Attempt N failed[ with status S | with 429 error (…) | with 5xx error]. Retrying …`
/// line.
fn retry(line: &str) -> Option<AgentEvent> {
    let (attempt, rest) = attempt(line)?;
    let rest = rest.strip_prefix(" failed")?;
    let (status, class, rest) = if let Some(after) = rest.strip_prefix(" with status ") {
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        (after.get(..n)?.parse::<u16>().ok(), None, after.get(n..)?)
    } else if let Some(after) = rest.strip_prefix(" with 429 error (no Retry-After header)") {
        (Some(429), None, after)
    } else if let Some(after) = rest.strip_prefix(" with 5xx error") {
        (None, Some("http 5xx"), after)
    } else {
        (None, None, rest)
    };
    let detail = rest
        .strip_prefix('.')?
        .trim_start()
        .strip_prefix("Retrying")?;
    let rate_limited = status == Some(429) || detail.contains("RESOURCE_EXHAUSTED");
    let cause = json_string(detail, "message")
        .map(str::to_owned)
        .or_else(|| status.map(|s| format!("http {s}")))
        .or_else(|| class.map(str::to_owned))
        .or_else(|| network_cause(detail))
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

/// `… Error: exception TypeError: fetch failed sending request` → `fetch failed sending
/// request`: the error text after the last `Error: `.
fn network_cause(detail: &str) -> Option<String> {
    let (_, cause) = detail.rsplit_once("Error: ")?;
    let cause = cause.trim();
    (!cause.is_empty()).then(|| cause.to_owned())
}

/// A quota error gemini waits out as its `RetryInfo` suggests: `Attempt N failed: <message,
/// possibly over several lines>. Retrying after <ms>ms...`, starting at `lines[0]`; with the
/// index of the line it ends on.
fn quota_retry(lines: &[String]) -> Option<(AgentEvent, usize)> {
    let (attempt, rest) = attempt(&lines[0])?;
    let first = rest.strip_prefix(" failed: ")?;
    let mut text = first.to_owned();
    for (i, line) in lines.iter().enumerate().take(MAX_MESSAGE_LINES + 1) {
        if i > 0 {
            // A new attempt (or another retry line) before the delay: not this shape.
            if attempt_line(line) {
                return None;
            }
            text.push('\n');
            text.push_str(line);
        }
        if let Some((message, waited)) = split_waited(&text) {
            return Some((quota_event(attempt, message, waited), i));
        }
    }
    None
}

fn attempt_line(line: &str) -> bool {
    attempt(line).is_some_and(|(_, rest)| rest.starts_with(" failed"))
}

/// `<message>. Retrying after 5118ms...` at the end of `text`: the message and the delay.
fn split_waited(text: &str) -> Option<(&str, u64)> {
    let text = text.trim_end();
    let (message, after) = text.rsplit_once(". Retrying after ")?;
    let ms = after.strip_suffix("ms...")?.parse().ok()?;
    Some((message, ms))
}

fn quota_event(attempt: u32, message: &str, waited_ms: u64) -> AgentEvent {
    // `<cause>\nSuggested retry after 1s.`: the cause is the first line.
    let cause = message.lines().next().unwrap_or(message).trim();
    let cause = cause.strip_suffix('.').unwrap_or(cause);
    let suggested = message
        .split_once("Suggested retry after ")
        .map(|(_, s)| s.trim().trim_end_matches('.'))
        .filter(|s| !s.is_empty());
    let mut text = format!("model request failed ({cause}); the cli will retry");
    if let Some(suggested) = suggested {
        text.push_str(&format!(" (suggested: after {suggested})"));
    }
    AgentEvent::Retry {
        attempt: Some(attempt),
        max_attempts: None,
        delay_ms: Some(waited_ms),
        // Quota errors come as 429, 499 or 503; which one is not printed.
        http_status: None,
        rate_limited: true,
        message: text,
    }
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

    /// (attempt, status, delay ms, rate limited, message contains)
    type Want = (u32, Option<u16>, Option<u64>, bool, &'static str);

    /// `text` (one retry report, possibly over several lines) gives `want`, or no event.
    fn check(text: &str, want: Option<Want>) {
        let events = retries(text);
        assert!(events.len() <= 1, "{text}: {events:?}");
        let got = events.into_iter().next().map(|e| match e {
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
                assert_eq!((a, s, d, r), (wa, ws, wd, wr), "{text}");
                assert!(m.contains(wm), "{m} lacks {wm}: {text}");
            }
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
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
            Some((3, None, None, false, "fetch failed")),
        );
        check(
            "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request",
            Some((1, None, None, false, "(fetch failed sending request)")),
        );
        check(
            "Attempt 2 failed with 429 error (no Retry-After header). Retrying with backoff... Error: got status: 429",
            Some((2, Some(429), None, true, "http 429")),
        );
        check(
            "Attempt 4 failed with 5xx error. Retrying with backoff... Error: got status: 502 Bad Gateway",
            Some((4, None, None, false, "http 5xx")),
        );
        check(
            "Attempt 5 failed. Retrying with backoff...",
            Some((5, None, None, false, "unknown error")),
        );
        // A quota error with a suggested delay: its message over two lines, then the wait.
        check(
            "Attempt 1 failed: Resource has been exhausted (e.g. check quota).\nSuggested retry after 1s.. Retrying after 5118ms...",
            Some((
                1,
                None,
                Some(5118),
                true,
                "(Resource has been exhausted (e.g. check quota)); the cli will retry (suggested: after 1s)",
            )),
        );
        check(
            "\u{1b}[33mAttempt 2 failed: Quota exceeded. Retrying after 60000ms...\u{1b}[0m",
            Some((2, None, Some(60000), true, "(Quota exceeded)")),
        );
        // Look-alikes.
        check("Attempt 1 failed with status 400. Giving up.", None);
        check("Attempt to read the file failed. Retrying later", None);
        check("Attempts 1 failed. Retrying", None);
        check("    at retryWithBackoff (file://x.js:1:2)", None);
        check("Error: Attempt 1 failed. Retrying", None);
        check("Attempt 1 failed: quota exhausted.\nGiving up.", None);
        check(
            "Attempt 1 failed: a\nb\nc\nd\ne\nf. Retrying after 5ms...",
            None,
        );
        check("Attempt 1 failed: quota. Retrying after soon...", None);
        check("Attempt x failed: quota. Retrying after 5ms...", None);
    }

    /// Two reports in a row: each gives its own event, the first never swallows the second.
    #[test]
    fn consecutive_reports_are_separate_events() {
        let text = "Attempt 1 failed: Quota exceeded.\nAttempt 2 failed: Quota exceeded.\nSuggested retry after 2s.. Retrying after 2400ms...\nAttempt 3 failed with status 500. Retrying with backoff...";
        let attempts: Vec<Option<u32>> = retries(text)
            .into_iter()
            .map(|e| match e {
                AgentEvent::Retry { attempt, .. } => attempt,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(attempts, [Some(2), Some(3)]);
    }

    /// Read as written, each report's event comes with its last line, not before.
    #[test]
    fn line_by_line_each_event_comes_with_the_last_line_of_its_report() {
        let lines = [
            "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {\"error\":{\"code\":429}}",
            "Attempt 2 failed: Resource has been exhausted (e.g. check quota).",
            "Suggested retry after 1s.. Retrying after 5118ms...",
            "some other line",
            "Attempt 3 failed with 5xx error. Retrying with backoff...",
        ];
        let mut reader = RetryLines::default();
        let at: Vec<Option<u32>> = lines
            .iter()
            .map(|line| match reader.push(line) {
                Some(AgentEvent::Retry { attempt, .. }) => attempt,
                Some(other) => panic!("{other:?}"),
                None => None,
            })
            .collect();
        assert_eq!(at, [Some(1), None, Some(2), None, Some(3)]);
    }

    /// gemini 0.61's real stderr against the fake model (`fixtures/gemini-retries/`), one
    /// retry each: (recording, attempt, status, delay ms, rate limited, message contains).
    #[test]
    fn the_recorded_retry_lines_give_one_retry_each() {
        let recorded = forge_testkit::fixtures::transcripts("gemini-retries");
        type Recorded = (
            &'static str,
            u32,
            Option<u16>,
            Option<u64>,
            bool,
            &'static str,
        );
        let want: [Recorded; 4] = [
            (
                "http_500",
                1,
                Some(500),
                None,
                false,
                "fake model: internal server error",
            ),
            (
                "network_error",
                1,
                None,
                None,
                false,
                "fetch failed sending request",
            ),
            (
                "rate_limit_no_retry_info",
                1,
                Some(429),
                None,
                true,
                "fake model: rate limited",
            ),
            (
                "rate_limit_retry_info",
                1,
                None,
                None,
                true,
                "suggested: after 1s",
            ),
        ];
        assert_eq!(recorded.len(), want.len(), "{recorded:?}");
        for (t, (name, attempt, status, delay, limited, says)) in recorded.iter().zip(want) {
            assert_eq!(t.scenario, name);
            let events = retries(&t.stderr);
            let first = events.first().unwrap_or_else(|| panic!("{name}: no retry"));
            let AgentEvent::Retry {
                attempt: a,
                http_status,
                delay_ms,
                rate_limited,
                message,
                ..
            } = first
            else {
                panic!("{name}: {first:?}")
            };
            assert_eq!(*a, Some(attempt), "{name}");
            assert_eq!(*http_status, status, "{name}");
            assert_eq!(*rate_limited, limited, "{name}");
            assert!(message.contains(says), "{name}: {message}");
            match (name, delay) {
                // The real wait: RetryInfo's 1 s, doubled from the 5 s base, plus jitter.
                ("rate_limit_retry_info", _) => {
                    assert!(delay_ms.is_some_and(|d| d >= 1000), "{name}: {delay_ms:?}")
                }
                _ => assert_eq!(*delay_ms, delay, "{name}"),
            }
            if name != "network_error" {
                assert_eq!(events.len(), 1, "{name}: {events:?}");
            }
        }
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
