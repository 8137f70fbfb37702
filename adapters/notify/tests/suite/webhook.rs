//! The webhook against a local server: delivered, retried, timed out, down, refused.

use std::time::Duration;

use forge_adapter_notify::{RetryPolicy, WebhookNotifier};
use forge_ports::Notifier;
use pretty_assertions::assert_eq;

use super::notice;
use super::server::{Answer, Server, down_url, ok};

const TOKEN: &str = "whk-secret-token-0123456789";

fn quick(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        attempts,
        backoff: Duration::from_millis(10),
        timeout: Duration::from_millis(500),
    }
}

#[tokio::test]
async fn posts_the_notice_with_the_bearer_token() {
    let server = Server::start(vec![ok("")]).await;
    let hook = WebhookNotifier::new(&server.url("/hook"), Some(TOKEN.into()), quick(3)).unwrap();
    hook.notify(&notice()).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/hook");
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let body = &seen[0].body;
    assert_eq!(body["event"], "approval_requested");
    assert_eq!(body["notice"]["task_id"], "t1");
    assert_eq!(body["notice"]["risk_score"], 7);
    assert_eq!(body["notice"]["files"][0], ".env");
    assert_eq!(
        body["notice"]["approve_command"],
        "forge-code-agent approvals approve ap-t1"
    );
    assert_eq!(
        body["notice"]["reject_command"],
        "forge-code-agent approvals reject ap-t1"
    );
    // A secret quoted in a reason leaves as a mask.
    let reasons = body["notice"]["reasons"][0].as_str().unwrap();
    assert!(!reasons.contains("AKIAABCDEFGHIJKLMNOP"), "{reasons}");
    assert!(reasons.contains("[REDACTED]"), "{reasons}");
}

#[tokio::test]
async fn no_token_no_authorization_header() {
    let server = Server::start(vec![ok("")]).await;
    let hook = WebhookNotifier::new(&server.url("/h"), None, quick(1)).unwrap();
    hook.notify(&notice()).await.unwrap();
    assert_eq!(server.seen()[0].authorization, None);
}

#[tokio::test]
async fn a_500_is_retried_until_it_goes_through() {
    let server = Server::start(vec![
        Answer(500, "boom", Duration::ZERO),
        Answer(503, "busy", Duration::ZERO),
        ok(""),
    ])
    .await;
    let hook = WebhookNotifier::new(&server.url("/hook"), None, quick(3)).unwrap();
    hook.notify(&notice()).await.unwrap();
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_500_that_stays_fails_after_the_attempts_without_the_token() {
    let server = Server::start(vec![Answer(500, "boom", Duration::ZERO)]).await;
    let hook = WebhookNotifier::new(&server.url("/hook"), Some(TOKEN.into()), quick(2)).unwrap();
    let err = hook.notify(&notice()).await.unwrap_err().to_string();
    assert_eq!(server.seen().len(), 2);
    assert!(err.contains("500"), "{err}");
    assert!(err.contains("after 2 attempts"), "{err}");
    assert!(!err.contains(TOKEN), "{err}");
}

#[tokio::test]
async fn a_4xx_is_not_retried() {
    let server = Server::start(vec![Answer(404, "no such hook", Duration::ZERO)]).await;
    let hook = WebhookNotifier::new(&server.url("/hook"), None, quick(3)).unwrap();
    let err = hook.notify(&notice()).await.unwrap_err().to_string();
    assert_eq!(server.seen().len(), 1);
    assert!(err.contains("404") && err.contains("no such hook"), "{err}");
}

#[tokio::test]
async fn a_server_that_does_not_answer_in_time_fails_with_timed_out() {
    let server = Server::start(vec![Answer(200, "", Duration::from_secs(30))]).await;
    let policy = RetryPolicy {
        attempts: 1,
        backoff: Duration::ZERO,
        timeout: Duration::from_millis(200),
    };
    let hook = WebhookNotifier::new(&server.url("/hook"), None, policy).unwrap();
    let err = hook.notify(&notice()).await.unwrap_err().to_string();
    assert!(err.contains("timed out"), "{err}");
}

#[tokio::test]
async fn a_server_that_is_down_fails_with_could_not_connect() {
    let hook = WebhookNotifier::new(&down_url().await, None, quick(2)).unwrap();
    let err = hook.notify(&notice()).await.unwrap_err();
    assert_eq!(err.kind(), "io");
    let err = err.to_string();
    assert!(err.contains("could not connect"), "{err}");
    assert!(err.contains("notifying through webhook"), "{err}");
}

#[test]
fn bad_urls_are_refused_up_front() {
    for url in ["not a url", "ftp://host/x", "file:///etc/passwd"] {
        let err = WebhookNotifier::new(url, None, RetryPolicy::default()).unwrap_err();
        assert_eq!(err.kind(), "invalid_request", "{url}");
    }
}
