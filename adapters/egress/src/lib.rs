//! forge-adapter-egress: the network egress point of a sandboxed run, and the bridge that
//! brings it into the sandbox.
//!
//! The agent runs in a network namespace of its own (bubblewrap `--unshare-net`): a loopback
//! interface and no route out. What it may reach is served from forge's process, outside,
//! on Unix sockets in a private directory that is bind-mounted into the sandbox:
//!
//! ```text
//!  sandbox (own netns)                         forge (outside)
//!  CLI ──tcp 127.0.0.1:PORT──► bridge ──unix route-N.sock──► Egress route ──tcp──► model
//!  CLI ──HTTP(S)_PROXY 127.0.0.1:3128──► bridge ──unix proxy.sock──► Egress proxy ──► allowed host
//! ```
//!
//! - A route (`EgressRoute`) is a fixed endpoint (the model, forge's MCP server of the run)
//!   reached at the same address inside. A route with keys is served as HTTP: the request's
//!   placeholder key is replaced by the real one outside, so the key never enters the
//!   sandbox; bodies stream both ways (SSE is never buffered). Other routes are relayed byte
//!   for byte.
//! - The proxy takes `CONNECT host:port` and absolute-URI requests. A host not in
//!   `allow_hosts`, the cloud metadata address and loopback or private addresses (also when
//!   an allowed name resolves to one) get `403` and a [`Denied`] on [`Egress::denials`];
//!   a route's address through the proxy is served as that route.
//! - [`EgressConfinement`] is the sandbox's network port (`forge_ports::NetworkConfinement`)
//!   served by this crate: one [`Egress`] per confined process, its plan's routes and hosts
//!   the domain's own types (`forge_domain::sandbox::EgressPlan`).
//! - [`run_bridge`] is the sandbox's init (`forge-code-agent __sandbox-bridge`): it listens
//!   on the routes' and the proxy's addresses on the sandbox's loopback, relays each
//!   connection to its socket, runs the CLI and hands it the signals it gets.

mod allow;
mod body;
mod bridge;
mod config;
mod confinement;
mod credentials;
mod denial;
mod egress;
mod error;
mod proxy;
mod relay;
mod route;
mod spec;

pub use bridge::run_bridge;
pub use config::{EgressConfig, fresh_key};
pub use confinement::EgressConfinement;
pub use denial::{Denied, DenyReason};
pub use egress::Egress;
pub use error::EgressError;
pub use spec::{BridgeListener, BridgeSpec};

#[cfg(test)]
mod tests;
