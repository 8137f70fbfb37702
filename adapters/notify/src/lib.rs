//! The [`forge_ports::Notifier`] port over HTTP.
//!
//! [`WebhookNotifier`] posts the approval request as JSON to any URL (optional bearer token);
//! [`TelegramNotifier`] sends it as a chat message through the Bot API, whose base URL is
//! configurable so tests can point it at a local server. Both retry transient failures
//! (connection refused, timeout, 5xx, 429) with exponential backoff, and never put a token
//! into an error message.

mod retry;
mod telegram;
mod webhook;

pub use retry::RetryPolicy;
pub use telegram::{TELEGRAM_API_BASE, TelegramNotifier};
pub use webhook::WebhookNotifier;
