//! Rate and usage limits: recognising that a run ended on one (with the time it resets),
//! and deciding whether to wait for the reset or fail.
//!
//! Pure: the caller hands in the clock's reading and the run's deadline.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::result::{ExecutionResult, ExecutionStatus};

/// What a run does when its CLI gives up on a rate or usage limit that says when it resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnRateLimit {
    /// End the run with the CLI's error (the default: nothing waits unasked).
    #[default]
    Fail,
    /// Wait until the reset (within the run's deadline), then resume the same session.
    Wait,
}

impl FromStr for OnRateLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "fail" => Ok(Self::Fail),
            "wait" => Ok(Self::Wait),
            other => Err(format!(
                "unknown rate-limit policy {other:?} (expected wait or fail)"
            )),
        }
    }
}

/// A limit the CLI reported, and when it resets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimit {
    /// Unix time in milliseconds.
    pub resets_at_ms: u64,
    /// What the CLI said (one line), for the event and the log.
    pub message: String,
}

/// What to do about a [`RateLimit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateLimitDecision {
    /// Sleep this long, then resume the session.
    Wait { wait_ms: u64 },
    /// Keep the failed result; `reason` says why no wait.
    Fail { reason: String },
}

/// A wait recorded in the result: what was hit, and how long forge waited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimitWait {
    pub resets_at_ms: u64,
    pub waited_ms: u64,
    pub message: String,
    /// The run that hit the limit (the resumed one has its own id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// Past the reset, so the limit has surely lifted when the session resumes.
pub const RESUME_MARGIN_MS: u64 = 1_000;

/// Waits at most this long at once (a "resets in 7 days" usage limit is a failure).
pub const MAX_WAIT_MS: u64 = 6 * 60 * 60 * 1_000;

/// Wait or fail: `Wait` only under [`OnRateLimit::Wait`], for a reset within
/// [`MAX_WAIT_MS`] that leaves the run time before its deadline (Unix ms).
pub fn decide(
    policy: OnRateLimit,
    limit: &RateLimit,
    now_ms: u64,
    deadline_ms: Option<u64>,
) -> RateLimitDecision {
    if policy == OnRateLimit::Fail {
        return RateLimitDecision::Fail {
            reason: "on_rate_limit is fail".into(),
        };
    }
    let resume_at = limit.resets_at_ms.max(now_ms) + RESUME_MARGIN_MS;
    let wait_ms = resume_at - now_ms;
    if wait_ms > MAX_WAIT_MS {
        return RateLimitDecision::Fail {
            reason: format!(
                "the limit resets in {} s, more than the longest wait ({} s)",
                wait_ms / 1_000,
                MAX_WAIT_MS / 1_000
            ),
        };
    }
    if let Some(deadline) = deadline_ms
        && resume_at >= deadline
    {
        return RateLimitDecision::Fail {
            reason: format!(
                "the limit resets {} s after the run's deadline",
                (resume_at - deadline) / 1_000
            ),
        };
    }
    RateLimitDecision::Wait { wait_ms }
}

/// The limit a failed run ended on, when the CLI said when it resets: Claude's
/// `rate_limit_event` with status `rejected`, or an error that names a rate/usage limit or
/// quota and a reset (`try again in 20s`, `retry after 3 seconds`, a `RetryInfo`
/// `retryDelay`, Claude's `usage limit reached|<epoch>`). A successful run has none; a limit
/// without a reset time is left to fail as before.
pub fn rate_limit_of(result: &ExecutionResult, now_ms: u64) -> Option<RateLimit> {
    if result.status == ExecutionStatus::Success {
        return None;
    }
    let from_events = result.raw_events.iter().filter_map(|raw| {
        let text = raw.as_str();
        if !text.contains("rate_limit_event") {
            return None;
        }
        claude_rejection(&raw.to_value())
    });
    let from_errors = result
        .errors
        .iter()
        .filter_map(|error| limit_in_text(&error.to_string(), now_ms));
    from_events
        .chain(from_errors)
        .max_by_key(|l| l.resets_at_ms)
}

/// Whether a failed run ended on a rate or usage limit, reset time known or not (a review
/// is then skipped, not failed): Claude's rejected `rate_limit_event`, or an error naming a
/// limit (`rate limit`, `usage limit`, `quota`, `RESOURCE_EXHAUSTED`, `too many requests`,
/// an HTTP 429). Returns what the CLI said, in one line.
pub fn limit_hit(result: &ExecutionResult) -> Option<String> {
    if result.status == ExecutionStatus::Success {
        return None;
    }
    let rejected = result.raw_events.iter().any(|raw| {
        let text = raw.as_str();
        text.contains("rate_limit_event") && text.contains("\"rejected\"")
    });
    if rejected {
        return Some("the provider's rate limit was reached".to_owned());
    }
    result
        .errors
        .iter()
        .map(ToString::to_string)
        .find(|text| names_a_limit(text))
        .map(|text| first_line(&text))
}

/// A limit word, or 429 as a number of its own (not inside `14290`).
fn names_a_limit(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    LIMIT_WORDS[..LIMIT_WORDS.len() - 1]
        .iter()
        .any(|word| lower.contains(word))
        || lower.match_indices("429").any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + 3..].chars().next();
            !before.is_some_and(|c| c.is_ascii_digit())
                && !after.is_some_and(|c| c.is_ascii_digit())
        })
}

/// Claude's `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":S}}`.
fn claude_rejection(event: &serde_json::Value) -> Option<RateLimit> {
    let info = event.get("rate_limit_info")?;
    if event.get("type")?.as_str()? != "rate_limit_event"
        || info.get("status")?.as_str()? != "rejected"
    {
        return None;
    }
    let resets_at_s = info.get("resetsAt")?.as_u64()?;
    let kind = info
        .get("rateLimitType")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("rate");
    Some(RateLimit {
        resets_at_ms: resets_at_s.saturating_mul(1_000),
        message: format!("{kind} limit reached"),
    })
}

/// Words that make an error a rate or usage limit, not just any failure (lower case).
const LIMIT_WORDS: [&str; 7] = [
    "rate limit",
    "rate_limit",
    "usage limit",
    "quota",
    "resource_exhausted",
    "too many requests",
    "429",
];

/// A limit and its reset in an error text, when it has both.
pub fn limit_in_text(text: &str, now_ms: u64) -> Option<RateLimit> {
    let lower = text.to_ascii_lowercase();
    if !LIMIT_WORDS.iter().any(|word| lower.contains(word)) {
        return None;
    }
    let resets_at_ms = epoch_after_bar(&lower)
        .or_else(|| after_phrase(&lower, "try again in ").map(|ms| now_ms + ms))
        .or_else(|| after_phrase(&lower, "retry after ").map(|ms| now_ms + ms))
        .or_else(|| retry_delay(&lower).map(|ms| now_ms + ms))?;
    Some(RateLimit {
        resets_at_ms,
        message: first_line(text),
    })
}

/// Claude's `… usage limit reached|1767225600` (Unix seconds after the bar).
fn epoch_after_bar(lower: &str) -> Option<u64> {
    let (_, rest) = lower.split_once("limit reached|")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let seconds: u64 = digits.parse().ok()?;
    // Plausible Unix seconds only (after 2001), not a count of something.
    (seconds > 1_000_000_000).then(|| seconds.saturating_mul(1_000))
}

/// The duration right after `phrase`: `1.5s`, `20 seconds`, `3m`, `2 minutes 5 seconds`,
/// `1h30m`, `500ms`, `2 days 3 hours`.
fn after_phrase(lower: &str, phrase: &str) -> Option<u64> {
    let start = lower.find(phrase)? + phrase.len();
    duration_ms(&lower[start..])
}

/// A `RetryInfo` `retryDelay` (`"retryDelay":"30s"`, also with escaped quotes).
fn retry_delay(lower: &str) -> Option<u64> {
    let start = lower.find("retrydelay")? + "retrydelay".len();
    let rest = lower[start..].trim_start_matches(['"', '\\', ':', ' ']);
    duration_ms(rest)
}

/// Leading `<number><unit>` groups of `text`, summed; `None` when the first has no unit.
fn duration_ms(text: &str) -> Option<u64> {
    let mut rest = text.trim_start();
    let mut total: Option<f64> = None;
    loop {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let Ok(number) = rest[..number_len].parse::<f64>() else {
            break;
        };
        let after = rest[number_len..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let Some(unit_ms) = unit_ms(&after[..unit_len]) else {
            break;
        };
        total = Some(total.unwrap_or(0.0) + number * unit_ms);
        rest = after[unit_len..].trim_start_matches([' ', ',']);
        rest = rest.strip_prefix("and ").unwrap_or(rest);
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative duration in ms, rounded up"
    )]
    total.map(|ms| ms.ceil() as u64)
}

fn unit_ms(unit: &str) -> Option<f64> {
    Some(match unit {
        "ms" | "millisecond" | "milliseconds" => 1.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
        "d" | "day" | "days" => 86_400_000.0,
        _ => return None,
    })
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ForgeError;
    use crate::ids::ProviderId;
    use crate::raw::RawJson;

    const NOW: u64 = 1_800_000_000_000;

    #[test]
    fn limits_and_their_resets_are_read_from_error_texts() {
        let check = |text: &str, expected: Option<u64>| {
            assert_eq!(
                limit_in_text(text, NOW).map(|l| l.resets_at_ms),
                expected,
                "{text}"
            );
        };
        // Codex / OpenAI.
        check(
            "Rate limit reached for gpt-5 on tokens per min. Please try again in 1.5s.",
            Some(NOW + 1_500),
        );
        check(
            "You've hit your usage limit. Upgrade to Pro or try again in 2 days 3 hours.",
            Some(NOW + 2 * 86_400_000 + 3 * 3_600_000),
        );
        check(
            "exceeded retry limit, last status: 429 Too Many Requests; try again in 20 seconds",
            Some(NOW + 20_000),
        );
        check(
            "429 rate limited, try again in 1h30m",
            Some(NOW + 5_400_000),
        );
        check("quota exceeded; retry after 500ms", Some(NOW + 500));
        // Gemini's RetryInfo, plain and escaped inside a message.
        check(
            r#"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}],"status":"RESOURCE_EXHAUSTED"}}"#,
            Some(NOW + 30_000),
        );
        check(
            r#"provider execution failed: {\"code\":429,\"retryDelay\":\"12s\"}"#,
            Some(NOW + 12_000),
        );
        // Claude's usage-limit result.
        check(
            "Claude AI usage limit reached|1800000360",
            Some(1_800_000_360_000),
        );

        // Look-alikes: a limit without a reset, a reset without a limit, odd numbers.
        check("API Error: 429 rate_limit_error", None);
        check("server overloaded (500), try again in 30s", None);
        check("rate limit: try again in a while", None);
        check("usage limit reached|42", None);
        check("Hello, try again in 5 minutes if you like", None);
        check("", None);
    }

    fn failed_with(errors: Vec<ForgeError>, raw: &[&str]) -> ExecutionResult {
        let mut result =
            ExecutionResult::empty(ProviderId::new("claude").unwrap(), ExecutionStatus::Error);
        result.errors = errors;
        result.raw_events = raw.iter().map(|line| RawJson::from_line(line)).collect();
        result
    }

    fn exec_error(text: &str) -> ForgeError {
        ForgeError::ProviderExecution {
            exit_code: Some(1),
            stderr_summary: text.into(),
            hint: None,
        }
    }

    #[test]
    fn a_limit_without_a_reset_is_still_a_limit() {
        let rejected = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected"}}"#;
        let allowed = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}"#;
        for (errors, raw, expected) in [
            (
                vec![exec_error("API Error: 429 rate_limit_error")],
                &[][..],
                true,
            ),
            (
                vec![exec_error(
                    "exceeded retry limit, last status: 429 Too Many Requests",
                )],
                &[],
                true,
            ),
            (
                vec![exec_error("[API Error: You exceeded your current quota]")],
                &[],
                true,
            ),
            (vec![exec_error("status RESOURCE_EXHAUSTED")], &[], true),
            (vec![exec_error("You've hit your usage limit.")], &[], true),
            (vec![exec_error("HTTP 429")], &[], true),
            (vec![], &[rejected][..], true),
            // Look-alikes.
            (vec![exec_error("timed out after 14290 ms")], &[], false),
            (vec![exec_error("server error 500")], &[], false),
            (vec![exec_error("port 4291 refused")], &[], false),
            (vec![], &[allowed][..], false),
            (vec![], &[], false),
        ] {
            let text = format!("{errors:?} {raw:?}");
            let result = failed_with(errors, raw);
            assert_eq!(limit_hit(&result).is_some(), expected, "{text}");
        }
        let mut ok = failed_with(vec![exec_error("429")], &[]);
        ok.status = ExecutionStatus::Success;
        assert_eq!(limit_hit(&ok), None);
    }

    #[test]
    fn a_failed_run_says_its_limit_and_a_successful_one_has_none() {
        let rejected = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1800000100,"rateLimitType":"five_hour"}}"#;
        let warning = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1800000100}}"#;
        let check = |result: &ExecutionResult, expected: Option<(u64, &str)>| {
            let got = rate_limit_of(result, NOW);
            assert_eq!(
                got.as_ref().map(|l| (l.resets_at_ms, l.message.as_str())),
                expected
            );
        };
        check(
            &failed_with(vec![exec_error("x")], &[rejected]),
            Some((1_800_000_100_000, "five_hour limit reached")),
        );
        // The latest reset wins.
        check(
            &failed_with(
                vec![exec_error("rate limit; try again in 200s")],
                &[rejected],
            ),
            Some((
                NOW + 200_000,
                "provider execution failed (exit code 1): rate limit; try again in 200s",
            )),
        );
        // Look-alikes: a warning is not a rejection; other errors have no limit.
        check(&failed_with(vec![exec_error("boom")], &[warning]), None);
        check(&failed_with(vec![ForgeError::Cancelled], &[]), None);
        let mut success = failed_with(vec![], &[rejected]);
        success.status = ExecutionStatus::Success;
        check(&success, None);
    }

    #[test]
    fn waits_only_when_asked_and_the_reset_comes_before_the_deadline() {
        let limit = |in_ms: u64| RateLimit {
            resets_at_ms: NOW + in_ms,
            message: "limit".into(),
        };
        let check = |policy, limit: RateLimit, deadline: Option<u64>, expected: Option<u64>| {
            let decision = decide(policy, &limit, NOW, deadline);
            let wait = match decision {
                RateLimitDecision::Wait { wait_ms } => Some(wait_ms),
                RateLimitDecision::Fail { .. } => None,
            };
            assert_eq!(wait, expected, "{limit:?} {deadline:?}");
        };
        use OnRateLimit::{Fail, Wait};
        check(Wait, limit(5_000), None, Some(5_000 + RESUME_MARGIN_MS));
        check(Wait, limit(5_000), Some(NOW + 60_000), Some(6_000));
        // A reset already past: resume after the margin only.
        let past = RateLimit {
            resets_at_ms: NOW - 10_000,
            message: String::new(),
        };
        check(Wait, past, None, Some(RESUME_MARGIN_MS));
        // Fails: asked to, reset after the deadline, or too far away.
        check(Fail, limit(5_000), None, None);
        check(Wait, limit(59_500), Some(NOW + 60_000), None);
        check(Wait, limit(MAX_WAIT_MS), None, None);
    }

    #[test]
    fn policies_parse_from_their_names() {
        assert_eq!("wait".parse(), Ok(OnRateLimit::Wait));
        assert_eq!("fail".parse(), Ok(OnRateLimit::Fail));
        assert!("Wait".parse::<OnRateLimit>().is_err());
        assert_eq!(OnRateLimit::default(), OnRateLimit::Fail);
    }
}
