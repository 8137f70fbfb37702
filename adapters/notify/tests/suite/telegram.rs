//! Telegram's sendMessage against a local fake Bot API.

use std::time::Duration;

use forge_adapter_notify::{RetryPolicy, TelegramNotifier};
use forge_ports::Notifier;
use pretty_assertions::assert_eq;

use super::notice;
use super::server::{Answer, Server, ok};

const BOT_TOKEN: &str = "123456:ABCdefGhIJKlmnoPQRstuVWXyz-0123";

fn quick() -> RetryPolicy {
    RetryPolicy {
        attempts: 2,
        backoff: Duration::from_millis(10),
        timeout: Duration::from_millis(500),
    }
}

#[tokio::test]
async fn sends_the_text_to_the_chat() {
    let server = Server::start(vec![ok(r#"{"ok":true,"result":{}}"#)]).await;
    let bot =
        TelegramNotifier::new(&server.url("/"), BOT_TOKEN.into(), "-1001".into(), quick()).unwrap();
    bot.notify(&notice()).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, format!("/bot{BOT_TOKEN}/sendMessage"));
    assert_eq!(seen[0].body["chat_id"], "-1001");
    let text = seen[0].body["text"].as_str().unwrap();
    assert!(text.contains("approval needed for task t1"), "{text}");
    assert!(
        text.contains("forge-code-agent approvals approve ap-t1"),
        "{text}"
    );
    assert!(!text.contains("AKIAABCDEFGHIJKLMNOP"), "{text}");
}

#[tokio::test]
async fn ok_false_is_a_refusal_and_the_token_never_shows() {
    let server = Server::start(vec![ok(r#"{"ok":false,"description":"chat not found"}"#)]).await;
    let bot =
        TelegramNotifier::new(&server.url(""), BOT_TOKEN.into(), "42".into(), quick()).unwrap();
    let err = bot.notify(&notice()).await.unwrap_err().to_string();
    assert!(err.contains("chat not found"), "{err}");
    assert!(!err.contains(BOT_TOKEN), "{err}");
    assert_eq!(server.seen().len(), 1, "a refusal is not retried");
}

#[tokio::test]
async fn a_500_then_ok_goes_through() {
    let server = Server::start(vec![
        Answer(502, "bad gateway", Duration::ZERO),
        ok(r#"{"ok":true}"#),
    ])
    .await;
    let bot =
        TelegramNotifier::new(&server.url(""), BOT_TOKEN.into(), "42".into(), quick()).unwrap();
    bot.notify(&notice()).await.unwrap();
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn missing_token_or_chat_is_a_clear_error() {
    let base = "http://127.0.0.1:1";
    let err = TelegramNotifier::new(base, " ".into(), "1".into(), quick()).unwrap_err();
    assert!(err.to_string().contains("TELEGRAM_BOT_TOKEN"), "{err}");
    let err = TelegramNotifier::new(base, "t".into(), "".into(), quick()).unwrap_err();
    assert!(err.to_string().contains("telegram_chat_id"), "{err}");
    let err = TelegramNotifier::new("nope", "t".into(), "1".into(), quick()).unwrap_err();
    assert!(err.to_string().contains("telegram_api_base"), "{err}");
}
