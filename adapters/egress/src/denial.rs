//! A refused connection, as the caller reports it (`sandbox_denied` events).

use serde::Serialize;

pub use forge_domain::sandbox::DenyReason;

/// One connection the egress point refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denied {
    /// `host:port` as the agent asked for it.
    pub target: String,
    pub reason: DenyReason,
}
