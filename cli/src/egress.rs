//! The sandbox's network half, plugged in here: forge-adapter-egress serves each confined
//! process's [`EgressPlan`] from this process, on Unix sockets in a short private directory
//! (`/tmp/fe-XXXXXX`, `0700`; a socket path has at most 107 bytes, and work trees under
//! deep directories exist), removed with the egress point.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_adapter_egress::{
    AllowHost, Credential, CredentialSlot, Denied, Egress, EgressConfig, Route,
};
use forge_adapter_sandbox::{EgressPlan, EgressSession, NetworkConfinement};
use forge_domain::ForgeError;
use forge_domain::sandbox::{KeySlot, SandboxDenial};
use forge_ports::SandboxDenials;
use tokio::sync::mpsc::UnboundedReceiver;

/// Starts forge-adapter-egress for each confined process; the bridge inside is this very
/// executable (`__sandbox-bridge`).
pub struct ForgeEgress {
    /// This executable, or why it cannot be known (then every confined start fails).
    forge_exe: Result<PathBuf, String>,
}

impl ForgeEgress {
    pub fn new() -> Self {
        sweep_stale(&socket_parent());
        Self {
            forge_exe: bridge_exe(),
        }
    }
}

/// Removes the socket directories a forge that was killed left behind: those whose proxy
/// socket no one listens on any more (a live egress point always does). Directories of
/// other users are `0700` and skipped.
fn sweep_stale(parent: &Path) {
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

/// The executable that serves `__sandbox-bridge`.
const FORGE_EXE: &str = "forge-code-agent";

/// forge itself; for a program built on forge's library (`cli/examples/rust_tools.rs`), the
/// `forge-code-agent` beside it (cargo puts examples one directory below), else on PATH.
fn bridge_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    if exe.file_stem().is_some_and(|n| n == FORGE_EXE) {
        return Ok(exe);
    }
    let beside = exe.ancestors().skip(1).take(2).map(|d| d.join(FORGE_EXE));
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(FORGE_EXE))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    beside.chain(on_path).find(|c| c.is_file()).ok_or_else(|| {
        format!(
            "{} is not {FORGE_EXE}, and no {FORGE_EXE} is beside it or on PATH: the sandbox's \
             network bridge runs as `{FORGE_EXE} __sandbox-bridge` (install {FORGE_EXE}, or \
             run with --sandbox off)",
            exe.display()
        )
    })
}

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

impl NetworkConfinement for ForgeEgress {
    fn start(&self, plan: &EgressPlan) -> Result<Box<dyn EgressSession>, ForgeError> {
        let forge_exe = self
            .forge_exe
            .as_ref()
            .map_err(|e| ForgeError::InvalidRequest {
                reason: format!("the sandbox cannot confine the network: {e}"),
            })?;
        let dir = tempfile::Builder::new()
            .prefix(SOCKET_DIR_PREFIX)
            .tempdir_in(socket_parent())
            .map_err(|e| ForgeError::io("creating the sandbox's socket directory", e))?;
        let invalid = |e: forge_adapter_egress::EgressError| ForgeError::InvalidRequest {
            reason: format!("the sandbox's egress point cannot start: {e}"),
        };
        let allow_hosts = plan
            .allow_hosts
            .iter()
            .map(|h| h.parse::<AllowHost>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let routes = plan
            .routes
            .iter()
            .map(|r| Route {
                addr: r.addr,
                upstream: r.upstream.clone(),
                credentials: r
                    .keys
                    .iter()
                    .map(|k| Credential {
                        slot: match &k.slot {
                            KeySlot::Header(name) => CredentialSlot::Header(name.clone()),
                            KeySlot::Query(name) => CredentialSlot::Query(name.clone()),
                        },
                        placeholder: k.placeholder.clone(),
                        value: k.value.clone(),
                    })
                    .collect(),
            })
            .collect();
        let mut egress = Egress::start(EgressConfig {
            socket_dir: dir.path().to_path_buf(),
            routes,
            allow_hosts,
        })
        .map_err(|e| match e {
            forge_adapter_egress::EgressError::Io { .. } => ForgeError::io(
                "starting the sandbox's egress point",
                std::io::Error::from(e),
            ),
            other => invalid(other),
        })?;
        let denials = egress.denials();
        Ok(Box::new(Session {
            bridge: egress
                .bridge_args(forge_exe)
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
        Some(SandboxDenial::network(
            denied.target,
            denied.reason.to_string(),
        ))
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
