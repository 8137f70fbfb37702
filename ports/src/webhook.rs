//! A forge's webhook delivery, authenticated and decoded (issue 39): the HTTP route hands
//! the raw body and headers over and gets forge events back, naming no signature scheme or
//! payload shape itself.

use forge_domain::forges::{ForgeEvent, ForgeKind};

pub trait WebhookCodec: Send + Sync {
    /// Whether `signature` (GitHub: `X-Hub-Signature-256`; GitLab: `X-Gitlab-Token`)
    /// authenticates `body` under `secret`, compared in constant time. A missing header is
    /// `false`.
    fn verify(&self, kind: ForgeKind, secret: &[u8], signature: Option<&str>, body: &[u8]) -> bool;

    /// The forge events of a delivery of event `event` (GitHub: `X-GitHub-Event`; GitLab:
    /// `X-Gitlab-Event`).
    ///
    /// # Errors
    /// Why the payload cannot be read (not JSON, a field the event needs missing): the
    /// route answers 400.
    fn decode(&self, kind: ForgeKind, event: &str, body: &[u8]) -> Result<Vec<ForgeEvent>, String>;
}
