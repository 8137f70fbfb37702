//! What one confined process may reach, as the sandbox plans it and the egress point serves
//! it: one set of types from the plan (`adapters/sandbox`) through the network port
//! (`forge_ports::NetworkConfinement`) to the egress (`adapters/egress`), no translation
//! between them.

// An address is data here (`core::net`, the same type as std's): nothing connects.
use core::net::SocketAddr;

use super::model::KeySlot;
use super::net::HostPattern;

/// What one confined process may reach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EgressPlan {
    /// Fixed endpoints reached at the same address inside (the model, forge's MCP server).
    pub routes: Vec<EgressRoute>,
    /// What the proxy lets through: the package registries, `[sandbox] allow_hosts`, and a
    /// model host that could not be given a route.
    pub allow_hosts: Vec<HostPattern>,
    /// Arguments the CLI is given before its own: codex's `-c` overrides that point it at
    /// its route (its base URL lives in its config file, not in a variable).
    pub cli_args: Vec<String>,
}

/// A fixed TCP endpoint the agent reaches at `addr` inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRoute {
    /// The address inside the sandbox, and outside when `upstream` is `None`.
    pub addr: SocketAddr,
    /// Where requests go outside, as a base URL (`https://api.anthropic.com`); `None` is
    /// `http://<addr>`. Setting it makes the route an HTTP route.
    pub upstream: Option<String>,
    /// Keys added outside: the agent only ever holds the placeholders.
    pub keys: Vec<EgressKey>,
}

impl EgressRoute {
    /// A route relayed byte for byte to the same address outside.
    pub fn relay(addr: SocketAddr) -> Self {
        Self {
            addr,
            upstream: None,
            keys: Vec::new(),
        }
    }

    /// Whether the route is served as HTTP (keys to add, or another upstream) rather than
    /// relayed byte for byte.
    pub fn is_http(&self) -> bool {
        !self.keys.is_empty() || self.upstream.is_some()
    }
}

/// A key the egress point puts in place of its placeholder, on its route only.
#[derive(Clone, PartialEq, Eq)]
pub struct EgressKey {
    /// Where a request carries it: a header (matched case-insensitively, the placeholder
    /// replaced wherever it occurs in the value, `Bearer ` kept) or a query parameter
    /// (replaced when its value is the placeholder).
    pub slot: KeySlot,
    /// What the agent's environment holds instead of the key (unique per run).
    pub placeholder: String,
    /// The real key (never printed: `Debug` hides it).
    pub value: String,
}

impl std::fmt::Debug for EgressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressKey")
            .field("slot", &self.slot)
            .field("placeholder", &self.placeholder)
            .field("value", &"[redacted]")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_http_when_it_adds_keys_or_goes_elsewhere() {
        let addr: SocketAddr = "127.0.0.1:4100".parse().unwrap();
        let key = EgressKey {
            slot: KeySlot::Header("x-api-key".into()),
            placeholder: "PH".into(),
            value: "sk-real".into(),
        };
        let check = |route: EgressRoute, http: bool| assert_eq!(route.is_http(), http, "{route:?}");
        check(EgressRoute::relay(addr), false);
        check(
            EgressRoute {
                keys: vec![key.clone()],
                ..EgressRoute::relay(addr)
            },
            true,
        );
        check(
            EgressRoute {
                upstream: Some("https://api.anthropic.com".into()),
                ..EgressRoute::relay(addr)
            },
            true,
        );
        assert!(!format!("{key:?}").contains("sk-real"));
    }
}
