//! A refused connection, as the caller reports it (`sandbox_denied` events).

use serde::Serialize;

/// One connection the egress point refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denied {
    /// `host:port` as the agent asked for it.
    pub target: String,
    pub reason: DenyReason,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum DenyReason {
    #[error("the host is not in [sandbox] allow_hosts")]
    NotAllowed,
    #[error("the cloud metadata address is never reachable")]
    MetadataAddress,
    #[error("loopback is reachable only at the run's routes")]
    Loopback,
    #[error("private and link-local networks are never reachable through the proxy")]
    PrivateAddress,
    #[error("the host name does not resolve")]
    Unresolvable,
    #[error("the proxy request names no host")]
    BadRequest,
}
