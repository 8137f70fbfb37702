//! Sending one request with retries and backoff.

use std::time::Duration;

use forge_domain::{ForgeError, Redactor};

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (at least 1).
    pub attempts: u32,
    /// Wait before the second attempt; doubled for each one after.
    pub backoff: Duration,
    /// Per attempt: connect plus response.
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(10),
        }
    }
}

/// What one attempt came to.
pub(crate) enum Attempt {
    Done,
    /// Worth another try (5xx, 429, refused, timed out).
    Retry(String),
    /// Will not get better (4xx, a reply saying no).
    Fail(String),
}

/// Classifies a response status.
pub(crate) fn by_status(status: reqwest::StatusCode, body: &str) -> Attempt {
    if status.is_success() {
        return Attempt::Done;
    }
    let body = forge_domain::error::excerpt(body.trim(), 200);
    let what = format!("answered {status}: {body}");
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        Attempt::Retry(what)
    } else {
        Attempt::Fail(what)
    }
}

/// Classifies a transport error (without its URL, which may hold a token).
pub(crate) fn by_error(err: reqwest::Error) -> Attempt {
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    let err = err.without_url();
    let mut text = format!("{kind}: {err}");
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    Attempt::Retry(text)
}

/// Runs `attempt` until it is done, fails for good, or the attempts run out. `shown` is
/// the request as errors name it (no token); `redactor` masks any secret in the reply.
pub(crate) async fn with_retries<F, Fut>(
    policy: RetryPolicy,
    channel: &str,
    shown: &str,
    redactor: &Redactor,
    mut attempt: F,
) -> Result<(), ForgeError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Attempt>,
{
    let attempts = policy.attempts.max(1);
    let mut wait = policy.backoff;
    let mut last = String::new();
    for n in 1..=attempts {
        match attempt().await {
            Attempt::Done => return Ok(()),
            Attempt::Fail(why) => {
                last = why;
                return Err(failure(channel, shown, redactor, &last, n));
            }
            Attempt::Retry(why) => last = why,
        }
        if n < attempts {
            tokio::time::sleep(wait).await;
            wait = wait.saturating_mul(2);
        }
    }
    Err(failure(channel, shown, redactor, &last, attempts))
}

fn failure(channel: &str, shown: &str, redactor: &Redactor, why: &str, tries: u32) -> ForgeError {
    let plural = if tries == 1 { "" } else { "s" };
    ForgeError::Io {
        context: format!("notifying through {channel}"),
        message: redactor
            .redact(&format!("{shown} {why} (after {tries} attempt{plural})"))
            .into_owned(),
    }
}
