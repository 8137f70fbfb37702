//! The forges' feedback path as the composition root makes it (issue 39): every forge the
//! worker knows (`[forges.NAME]` of the user config; github.com by default) with its token
//! and webhook secret from the worker's environment, the queue follow-ups go on, the store
//! that remembers deliveries. `serve` hands it to the webhook route; `forge poll` feeds it
//! events read from the API.

use std::sync::Arc;

use forge_app::forges::{FeedbackParts, FeedbackSettings, ForgeEndpoint, ForgeFeedback};
use forge_domain::forges::default_github;
use forge_ports::TaskQueue;

use crate::exit::Failure;

pub mod poll;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Every configured forge whose token is set, with its webhook secret when set. A forge
/// without a token cannot be asked who may steer, so it takes no feedback.
///
/// # Errors
/// [`Failure::Usage`] when `[forges]` is malformed.
pub fn endpoints() -> Result<Vec<ForgeEndpoint>, Failure> {
    let mut forges = super::pull_request::worker_forges()?.forges;
    let github = default_github();
    if !forges.iter().any(|f| f.host == github.host) {
        forges.push(github);
    }
    let mut out = Vec::new();
    for settings in forges {
        if env(&settings.token_env).is_none() {
            continue;
        }
        let forge = super::pull_request::forge_client(&settings)?;
        let webhook_secret = settings
            .webhook_secret_env
            .as_deref()
            .and_then(env)
            .map(String::into_bytes);
        out.push(ForgeEndpoint {
            settings,
            forge,
            webhook_secret,
        });
    }
    Ok(out)
}

/// The feedback path over the queue at `url` (`queue` already open); `None` when no forge
/// has a token.
///
/// # Errors
/// [`Failure`] when `[forges]` is malformed or the queue's store cannot be opened.
pub async fn feedback(
    url: &str,
    queue: Arc<dyn TaskQueue>,
) -> Result<Option<Arc<ForgeFeedback>>, Failure> {
    let endpoints = endpoints()?;
    if endpoints.is_empty() {
        return Ok(None);
    }
    let deliveries = super::queue::open_deliveries(url).await?;
    let settings = FeedbackSettings {
        bot_login: env("FORGE_BOT_LOGIN"),
        ..FeedbackSettings::default()
    };
    Ok(Some(Arc::new(ForgeFeedback::new(FeedbackParts {
        endpoints,
        queue,
        deliveries,
        ids: Arc::new(forge_adapter_telemetry::UuidV7Ids::new()),
        codec: Arc::new(forge_adapter_webhooks::Webhooks),
        settings,
    }))))
}
