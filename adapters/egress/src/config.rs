//! What the egress point is asked to let through: the plan's routes (fixed endpoints, with
//! the keys added outside) and the hosts the proxy may reach — the domain's types
//! ([`EgressRoute`], [`EgressKey`], [`HostPattern`]), as the sandbox planned them.

use std::path::PathBuf;

use forge_domain::sandbox::{EgressKey, EgressRoute, HostPattern, KeySlot};

/// The egress point of one sandboxed run.
#[derive(Debug, Clone)]
pub struct EgressConfig {
    /// A private directory for the Unix sockets (created `0700` when missing). It is
    /// bind-mounted into the sandbox at the same path; keep it short (a socket path has at
    /// most 107 bytes).
    pub socket_dir: PathBuf,
    /// The fixed endpoints the agent reaches at the same address inside the sandbox.
    pub routes: Vec<EgressRoute>,
    /// The hosts the proxy lets through (`host`, `*.domain`, each optionally `:port`).
    pub allow_hosts: Vec<HostPattern>,
}

/// A key with a fresh placeholder (`forge-sandbox-placeholder-<uuid>`): unique, so replacing
/// it can never touch anything else.
#[must_use]
pub fn fresh_key(slot: KeySlot, value: impl Into<String>) -> EgressKey {
    EgressKey {
        slot,
        placeholder: format!(
            "forge-sandbox-placeholder-{}",
            uuid::Uuid::now_v7().simple()
        ),
        value: value.into(),
    }
}
