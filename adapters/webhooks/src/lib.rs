//! forge-adapter-webhooks: what a forge's webhook delivery carries, checked and decoded.
//!
//! A delivery is authenticated before its body is read as JSON: GitHub signs the raw body
//! (HMAC SHA-256 with the webhook secret, `X-Hub-Signature-256: sha256=<hex>`), GitLab sends
//! the secret itself (`X-Gitlab-Token`); both are compared in constant time. Then the
//! payload is decoded into [`forge_domain::forges::ForgeEvent`]s — only the fields forge acts
//! on — for the domain's rule to classify.

pub mod codec;
pub mod github;
pub mod gitlab;
pub mod signature;

pub use codec::Webhooks;
pub use signature::{github_signature, verify_github, verify_gitlab};

/// Why a payload cannot be decoded: the route answers 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    #[error("the {event} payload has no {field}")]
    Missing { event: String, field: &'static str },
    #[error("the {event} payload's repository URL {url:?} names no repository")]
    BadRepository { event: String, url: String },
}
