//! The sandbox's ports (issue 31): the network half a confined process is given
//! ([`NetworkConfinement`], served by `forge-adapter-egress`), and how a process runner
//! describes its confinement ([`SandboxDescription`], rendered to text only where a result,
//! footer or report shows it).

use std::path::PathBuf;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::sandbox::EgressPlan;

use crate::process::SandboxDenials;

/// Starts the egress point of one confined process.
pub trait NetworkConfinement: Send + Sync {
    /// An egress point serving `plan`, up before the process starts.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when its sockets cannot be made; [`ForgeError::InvalidRequest`]
    /// for a route or host it cannot serve, or when the bridge it runs inside the sandbox
    /// cannot be found.
    fn start(&self, plan: &EgressPlan) -> Result<Box<dyn EgressSession>, ForgeError>;
}

/// A running egress point. Dropping it stops it and removes its sockets.
#[async_trait]
pub trait EgressSession: Send {
    /// The argv prefix run inside the sandbox before the command (the bridge).
    fn bridge_args(&self) -> Vec<String>;
    /// The variables the command needs inside (the proxy).
    fn inside_env(&self) -> Vec<(String, String)>;
    /// The directory of the sockets, bound into the sandbox at the same path.
    fn socket_dir(&self) -> PathBuf;
    /// The refusals as they happen, once.
    fn take_denials(&mut self) -> Option<Box<dyn SandboxDenials>>;
    /// Stops serving and waits until every connection has ended; the sockets are removed.
    async fn shutdown(self: Box<Self>);
}

/// How a process runner confines the invocations that carry a confinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxDescription {
    /// Unconfined by the user's choice (`--sandbox off`).
    Off,
    On {
        /// The mechanism and its version (`bubblewrap 0.8.0`), once probed.
        mechanism: Option<String>,
        network: SandboxNetwork,
    },
}

/// The network half of a confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxNetwork {
    /// Through forge's egress point: the model, forge's MCP server, the registries and
    /// `allow_hosts`; each refused connection reported.
    Egress,
    /// No egress point plugged in.
    NotConfined,
}

impl SandboxNetwork {
    fn text(self) -> &'static str {
        match self {
            Self::Egress => "network through forge's egress",
            Self::NotConfined => "network not confined",
        }
    }
}

impl std::fmt::Display for SandboxDescription {
    /// `off`, or `on (<mechanism>; <network>)`: what results and reports say.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Off => f.write_str("off"),
            Self::On {
                mechanism: Some(m),
                network,
            } => write!(f, "on ({m}; {})", network.text()),
            Self::On {
                mechanism: None,
                network,
            } => write!(f, "on ({})", network.text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_as_results_say_it() {
        let check = |d: SandboxDescription, text: &str| assert_eq!(d.to_string(), text);
        check(SandboxDescription::Off, "off");
        check(
            SandboxDescription::On {
                mechanism: Some("bubblewrap 0.8.0".into()),
                network: SandboxNetwork::Egress,
            },
            "on (bubblewrap 0.8.0; network through forge's egress)",
        );
        check(
            SandboxDescription::On {
                mechanism: None,
                network: SandboxNetwork::NotConfined,
            },
            "on (network not confined)",
        );
    }
}
