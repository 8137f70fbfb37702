//! [`WebhookNotifier`]: POSTs the approval request as JSON.

use async_trait::async_trait;
use forge_domain::delivery::ApprovalNotice;
use forge_domain::{ForgeError, Redactor};
use forge_ports::Notifier;

use crate::retry::{RetryPolicy, by_error, by_status, with_retries};

pub struct WebhookNotifier {
    client: reqwest::Client,
    url: String,
    token: Option<String>,
    policy: RetryPolicy,
    redactor: Redactor,
}

impl std::fmt::Debug for WebhookNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookNotifier")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .finish_non_exhaustive()
    }
}

impl WebhookNotifier {
    /// Posts to `url`, with `Authorization: Bearer <token>` when a token is given
    /// (`FORGE_WEBHOOK_TOKEN`, read by the caller).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when `url` is not an http(s) URL;
    /// [`ForgeError::Io`] when the HTTP client cannot be built.
    pub fn new(url: &str, token: Option<String>, policy: RetryPolicy) -> Result<Self, ForgeError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| ForgeError::InvalidRequest {
            reason: format!("[delivery] webhook_url {url:?}: {e}"),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "[delivery] webhook_url {url:?}: only http and https are supported"
                ),
            });
        }
        let client = reqwest::Client::builder()
            .timeout(policy.timeout)
            .build()
            .map_err(|e| ForgeError::io("building the webhook client", e))?;
        let redactor = Redactor::new().with_secrets(token.iter().cloned());
        Ok(Self {
            client,
            url: url.to_owned(),
            token,
            policy,
            redactor,
        })
    }

    /// The JSON posted: the notice, every text field redacted.
    pub fn body(&self, notice: &ApprovalNotice) -> String {
        let body = serde_json::json!({
            "event": "approval_requested",
            "notice": notice,
        });
        // The mask has no quote or backslash, so redacting the JSON text keeps it JSON.
        self.redactor.redact(&body.to_string()).into_owned()
    }
}

#[async_trait]
impl Notifier for WebhookNotifier {
    fn channel(&self) -> &str {
        "webhook"
    }

    async fn notify(&self, notice: &ApprovalNotice) -> Result<(), ForgeError> {
        let body = self.body(notice);
        let shown = format!("POST {}", self.redactor.redact(&self.url));
        with_retries(self.policy, "webhook", &shown, &self.redactor, || {
            let mut request = self
                .client
                .post(&self.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            async move {
                match request.send().await {
                    Ok(response) => {
                        let status = response.status();
                        let text = response.text().await.unwrap_or_default();
                        by_status(status, &text)
                    }
                    Err(err) => by_error(err),
                }
            }
        })
        .await
    }
}
