//! What the egress point is asked to let through: routes (fixed endpoints, with the keys added
//! outside) and the hosts the proxy may reach.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::allow::AllowHost;

/// The egress point of one sandboxed run.
#[derive(Debug, Clone)]
pub struct EgressConfig {
    /// A private directory for the Unix sockets (created `0700` when missing). It is
    /// bind-mounted into the sandbox at the same path; keep it short (a socket path has at
    /// most 107 bytes).
    pub socket_dir: PathBuf,
    /// The fixed endpoints the agent reaches at the same address inside the sandbox.
    pub routes: Vec<Route>,
    /// The hosts the proxy lets through (`host`, `*.domain`, each optionally `:port`).
    pub allow_hosts: Vec<AllowHost>,
}

/// A fixed TCP endpoint (the model, forge's MCP server of the run) the agent reaches at
/// `addr` inside the sandbox.
#[derive(Debug, Clone)]
pub struct Route {
    /// The address inside the sandbox, and outside when `upstream` is `None`.
    pub addr: SocketAddr,
    /// Where requests go outside, as a base URL (`https://api.anthropic.com`); `None` is
    /// `http://<addr>`. Setting it makes the route an HTTP route.
    pub upstream: Option<String>,
    /// Keys added outside: the agent only ever holds the placeholders.
    pub credentials: Vec<Credential>,
}

impl Route {
    /// A route relayed byte for byte to the same address outside.
    #[must_use]
    pub fn relay(addr: SocketAddr) -> Self {
        Self {
            addr,
            upstream: None,
            credentials: Vec::new(),
        }
    }

    /// Whether the route is served as HTTP (keys to add, or another upstream) rather than
    /// relayed byte for byte.
    #[must_use]
    pub fn is_http(&self) -> bool {
        !self.credentials.is_empty() || self.upstream.is_some()
    }
}

/// Where a request carries its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSlot {
    /// A header, matched case-insensitively (`x-api-key`, `authorization` with its `Bearer `
    /// prefix, `x-goog-api-key`); the placeholder is replaced wherever it occurs in the value.
    Header(String),
    /// A query parameter (`key` for Gemini), replaced when its value is the placeholder.
    Query(String),
}

/// A key the egress point puts in place of its placeholder, on its route only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub slot: CredentialSlot,
    /// What the agent's environment holds instead of the key.
    pub placeholder: String,
    /// The real key (never printed: `Debug` hides it).
    pub value: String,
}

impl Credential {
    /// A credential with a fresh placeholder (`forge-sandbox-placeholder-<uuid>`): unique, so
    /// replacing it can never touch anything else.
    #[must_use]
    pub fn new(slot: CredentialSlot, value: impl Into<String>) -> Self {
        Self {
            slot,
            placeholder: format!(
                "forge-sandbox-placeholder-{}",
                uuid::Uuid::now_v7().simple()
            ),
            value: value.into(),
        }
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("slot", &self.slot)
            .field("placeholder", &self.placeholder)
            .field("value", &"[redacted]")
            .finish()
    }
}
