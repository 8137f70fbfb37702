//! [`TelegramNotifier`]: the Bot API's `sendMessage` to one chat.

use async_trait::async_trait;
use forge_domain::delivery::ApprovalNotice;
use forge_domain::{ForgeError, Redactor};
use forge_ports::Notifier;

use crate::retry::{Attempt, RetryPolicy, by_error, by_status, with_retries};

/// Telegram's own API; tests and proxies set another base.
pub const TELEGRAM_API_BASE: &str = "https://api.telegram.org";

/// Telegram refuses longer messages.
const MAX_TEXT: usize = 4000;

pub struct TelegramNotifier {
    client: reqwest::Client,
    base: String,
    token: String,
    chat_id: String,
    policy: RetryPolicy,
    redactor: Redactor,
}

impl std::fmt::Debug for TelegramNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramNotifier")
            .field("base", &self.base)
            .field("chat_id", &self.chat_id)
            .finish_non_exhaustive()
    }
}

impl TelegramNotifier {
    /// Sends to `chat_id` as the bot with `token` (`TELEGRAM_BOT_TOKEN`, read by the caller)
    /// through the API at `base` ([`TELEGRAM_API_BASE`] normally).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for an empty token or chat id or a base that is not an
    /// http(s) URL; [`ForgeError::Io`] when the HTTP client cannot be built.
    pub fn new(
        base: &str,
        token: String,
        chat_id: String,
        policy: RetryPolicy,
    ) -> Result<Self, ForgeError> {
        if token.trim().is_empty() {
            return Err(ForgeError::InvalidRequest {
                reason: "telegram: TELEGRAM_BOT_TOKEN is empty".into(),
            });
        }
        if chat_id.trim().is_empty() {
            return Err(ForgeError::InvalidRequest {
                reason: "telegram: [delivery] telegram_chat_id is empty".into(),
            });
        }
        let ok_base = reqwest::Url::parse(base)
            .map(|u| matches!(u.scheme(), "http" | "https"))
            .unwrap_or(false);
        if !ok_base {
            return Err(ForgeError::InvalidRequest {
                reason: format!("[delivery] telegram_api_base {base:?} is not an http(s) URL"),
            });
        }
        let client = reqwest::Client::builder()
            .timeout(policy.timeout)
            .build()
            .map_err(|e| ForgeError::io("building the telegram client", e))?;
        let redactor = Redactor::new().with_secrets([token.clone()]);
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            token,
            chat_id,
            policy,
            redactor,
        })
    }

    fn url(&self) -> String {
        format!("{}/bot{}/sendMessage", self.base, self.token)
    }
}

#[async_trait]
impl Notifier for TelegramNotifier {
    fn channel(&self) -> &str {
        "telegram"
    }

    async fn notify(&self, notice: &ApprovalNotice) -> Result<(), ForgeError> {
        let text = self.redactor.redact(&notice.text()).into_owned();
        let text = forge_domain::error::excerpt(&text, MAX_TEXT);
        let body = serde_json::json!({
            "chat_id": self.chat_id,
            "text": text,
            "disable_web_page_preview": true,
        });
        let url = self.url();
        let shown = format!("POST {}", self.redactor.redact(&url));
        with_retries(self.policy, "telegram", &shown, &self.redactor, || {
            let request = self.client.post(&url).json(&body);
            async move {
                match request.send().await {
                    Ok(response) => {
                        let status = response.status();
                        let text = response.text().await.unwrap_or_default();
                        match by_status(status, &text) {
                            // A 200 whose body says `"ok": false` is still a refusal.
                            Attempt::Done if !replied_ok(&text) => {
                                Attempt::Fail(format!("answered without ok: {text}"))
                            }
                            other => other,
                        }
                    }
                    Err(err) => by_error(err),
                }
            }
        })
        .await
    }
}

fn replied_ok(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("ok").and_then(serde_json::Value::as_bool))
        .unwrap_or(false)
}
