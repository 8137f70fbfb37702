//! The network port ([`NetworkConfinement`]) served by this crate: an [`Egress`] per confined
//! process, on Unix sockets in a short private directory (`/tmp/fe-XXXXXX`, `0700`; a socket
//! path has at most 107 bytes, and work trees under deep directories exist), removed with
//! the egress point. The plan's routes, keys and hosts are served as the sandbox planned
//! them: the same types, no translation.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::sandbox::{EgressPlan, SandboxDenial};
use forge_ports::{EgressSession, NetworkConfinement, SandboxDenials};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::{Denied, Egress, EgressConfig, EgressError};

/// Starts an egress point for each confined process; `bridge` is the program that runs the
/// bridge inside (`<forge> __sandbox-bridge`), or why it cannot be known (then every
/// confined start fails with that reason).
pub struct EgressConfinement {
    bridge: Result<PathBuf, String>,
}

impl EgressConfinement {
    /// Sweeps the socket directories a killed forge left behind first.
    #[must_use]
    pub fn new(bridge: Result<PathBuf, String>) -> Self {
        sweep_stale(&socket_parent());
        Self { bridge }
    }
}

/// Removes the socket directories a forge that was killed left behind: those whose proxy
/// socket no one listens on any more (a live egress point always does). Directories of
/// other users are `0700` and skipped.
pub fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let ours = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(SOCKET_DIR_PREFIX));
        let proxy = dir.join("proxy.sock");
        if !ours || !proxy.exists() {
            continue;
        }
        let refused = matches!(
            std::os::unix::net::UnixStream::connect(&proxy),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
        );
        if refused {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// The socket directories' name prefix (`/tmp/fe-XXXXXX`).
const SOCKET_DIR_PREFIX: &str = "fe-";

/// Where the socket directories go: `/tmp` (short, and the sandbox's own `/tmp` is private,
/// so the bind mount is the only thing of it inside), else the system's temporary directory.
fn socket_parent() -> PathBuf {
    let tmp = Path::new("/tmp");
    if tmp.is_dir() {
        tmp.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

impl NetworkConfinement for EgressConfinement {
    fn start(&self, plan: &EgressPlan) -> Result<Box<dyn EgressSession>, ForgeError> {
        let bridge = self
            .bridge
            .as_ref()
            .map_err(|e| ForgeError::InvalidRequest {
                reason: format!("the sandbox cannot confine the network: {e}"),
            })?;
        let dir = tempfile::Builder::new()
            .prefix(SOCKET_DIR_PREFIX)
            .tempdir_in(socket_parent())
            .map_err(|e| ForgeError::io("creating the sandbox's socket directory", e))?;
        let mut egress = Egress::start(EgressConfig {
            socket_dir: dir.path().to_path_buf(),
            routes: plan.routes.clone(),
            allow_hosts: plan.allow_hosts.clone(),
        })
        .map_err(|e| match e {
            EgressError::Io { .. } => ForgeError::io(
                "starting the sandbox's egress point",
                std::io::Error::from(e),
            ),
            other => ForgeError::InvalidRequest {
                reason: format!("the sandbox's egress point cannot start: {other}"),
            },
        })?;
        let denials = egress.denials();
        Ok(Box::new(Session {
            bridge: egress
                .bridge_args(bridge)
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            egress,
            denials,
            _dir: dir,
        }))
    }
}

/// The egress's refusals as the sandbox reports them.
struct Denials(UnboundedReceiver<Denied>);

#[async_trait]
impl SandboxDenials for Denials {
    async fn next_denial(&mut self) -> Option<SandboxDenial> {
        let denied = self.0.recv().await?;
        Some(SandboxDenial::refused(denied.target, denied.reason))
    }
}

struct Session {
    egress: Egress,
    bridge: Vec<String>,
    denials: Option<UnboundedReceiver<Denied>>,
    /// Removed (with whatever is left in it) when the session ends.
    _dir: tempfile::TempDir,
}

#[async_trait]
impl EgressSession for Session {
    fn bridge_args(&self) -> Vec<String> {
        self.bridge.clone()
    }

    fn inside_env(&self) -> Vec<(String, String)> {
        self.egress.inside_env()
    }

    fn socket_dir(&self) -> PathBuf {
        self.egress.socket_dir().to_path_buf()
    }

    fn take_denials(&mut self) -> Option<Box<dyn SandboxDenials>> {
        let denials = self.denials.take()?;
        Some(Box::new(Denials(denials)))
    }

    async fn shutdown(self: Box<Self>) {
        let Session { egress, _dir, .. } = *self;
        egress.shutdown().await;
        drop(_dir);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

    use super::*;

    #[test]
    fn stale_socket_directories_are_swept_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        let stale = parent.path().join("fe-stale");
        let live = parent.path().join("fe-live");
        let other = parent.path().join("other");
        for dir in [&stale, &live, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        // A socket whose listener is gone, one still listened on, and a look-alike.
        drop(std::os::unix::net::UnixListener::bind(stale.join("proxy.sock")).unwrap());
        let _listening = std::os::unix::net::UnixListener::bind(live.join("proxy.sock")).unwrap();
        drop(std::os::unix::net::UnixListener::bind(other.join("proxy.sock")).unwrap());
        sweep_stale(parent.path());
        assert!(!stale.exists());
        assert!(live.exists());
        assert!(other.exists());
    }
}
