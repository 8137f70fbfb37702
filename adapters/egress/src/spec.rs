//! What the bridge inside the sandbox is told: which loopback address goes to which socket.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The bridge's whole configuration, passed as JSON after `--spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeSpec {
    pub listen: Vec<BridgeListener>,
}

/// One address the bridge listens on inside the sandbox, relayed to one Unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeListener {
    pub addr: SocketAddr,
    pub socket: PathBuf,
    /// An HTTP route served by the egress point: when the egress side ends a connection the
    /// CLI has not ended (an upstream stream cut mid-response), the CLI gets a TCP reset, as
    /// it would from the model itself — a CLI retries a reset, not a clean close. The Unix
    /// hop cannot carry a reset, and the egress's HTTP framing makes a reset after a
    /// complete response harmless.
    #[serde(default)]
    pub reset_on_close: bool,
}

impl BridgeSpec {
    /// The spec as the bridge's `--spec` argument.
    #[must_use]
    pub fn to_json(&self) -> String {
        // A struct of addresses and paths always serialises; the fallback is never taken.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a `--spec` argument.
    ///
    /// # Errors
    /// The JSON is not a bridge spec.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}
