//! The network port ([`NetworkConfinement`]) served by this crate: an [`Egress`] per confined
//! process, on Unix sockets in a short private directory (`/tmp/fe-XXXXXX`, `0700`; a socket
//! path has at most 107 bytes, and work trees under deep directories exist), removed with
//! the egress point. The plan's routes, keys and hosts are served as the sandbox planned
//! them: the same types, no translation.

use std::fs::File;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::sandbox::{EgressPlan, SandboxDenial};
use forge_ports::{EgressSession, NetworkConfinement, SandboxDenials};
use nix::fcntl::{Flock, FlockArg};
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

/// Removes the socket directories a forge that was killed left behind: those whose
/// [`OWNER_LOCK`] no one holds any more (a live session holds it from before its sockets
/// exist until its directory is gone, and the kernel lets it go when its process dies).
/// A directory without the lock file is kept: it is one being made, or not provably
/// stale (a socket that refuses a connection may be one bound but not yet listening —
/// another run's, which removing would break). Directories of other users are `0700`
/// and skipped.
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
        if !ours {
            continue;
        }
        // Held while the directory is removed, so no other sweep takes it meanwhile.
        if let Some(_abandoned) = abandoned_lock(&dir) {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// The lock file a socket directory's session holds for as long as it lives.
const OWNER_LOCK: &str = "owner.lock";
/// The lock file's name while it is being locked (the sweep never looks at it).
const OWNER_LOCK_NEW: &str = ".owner.lock.new";

/// The directory's owner lock, taken: its session is gone. `None` when the lock is held
/// (the session lives) or there is no lock file.
fn abandoned_lock(dir: &Path) -> Option<Flock<File>> {
    let file = File::open(dir.join(OWNER_LOCK)).ok()?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()
}

/// Locks the directory's owner lock for the caller's lifetime. Locked under another name
/// first and then renamed: a sweep never finds the lock file unlocked while its owner
/// lives.
fn hold_owner_lock(dir: &Path) -> std::io::Result<Flock<File>> {
    let provisional = dir.join(OWNER_LOCK_NEW);
    let file = File::create(&provisional)?;
    let locked = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| std::io::Error::from(errno))?;
    std::fs::rename(&provisional, dir.join(OWNER_LOCK))?;
    Ok(locked)
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
        let lock = hold_owner_lock(dir.path())
            .map_err(|e| ForgeError::io("locking the sandbox's socket directory", e))?;
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
            _lock: lock,
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
    /// Held until the directory is gone (fields drop in order): no sweep removes a live
    /// session's directory.
    _lock: Flock<File>,
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
        let Session {
            egress,
            _dir,
            _lock,
            ..
        } = *self;
        egress.shutdown().await;
        drop(_dir);
        drop(_lock);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

    use super::*;

    /// A socket directory as a session leaves it: its owner lock held (`Some`) or let go.
    fn socket_dir(parent: &Path, name: &str, live: bool) -> (PathBuf, Option<Flock<File>>) {
        let dir = parent.join(name);
        std::fs::create_dir(&dir).unwrap();
        // A socket nobody listens on: what the old sweep took for stale, live or not.
        drop(std::os::unix::net::UnixListener::bind(dir.join("proxy.sock")).unwrap());
        let lock = hold_owner_lock(&dir).unwrap();
        (dir, live.then_some(lock))
    }

    #[test]
    fn only_directories_whose_owner_lock_is_let_go_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        let (live, _held) = socket_dir(parent.path(), "fe-live", true);
        let (dead, _) = socket_dir(parent.path(), "fe-dead", false);
        // Look-alikes that must stay: not ours by name; one being made (no lock file yet);
        // one whose lock is still under its provisional name.
        let (other, _) = socket_dir(parent.path(), "other", false);
        let making = parent.path().join("fe-making");
        std::fs::create_dir(&making).unwrap();
        drop(std::os::unix::net::UnixListener::bind(making.join("proxy.sock")).unwrap());
        let provisional = parent.path().join("fe-provisional");
        std::fs::create_dir(&provisional).unwrap();
        std::fs::write(provisional.join(OWNER_LOCK_NEW), "").unwrap();

        sweep_stale(parent.path());

        let check = |dir: &Path, kept: bool| assert_eq!(dir.exists(), kept, "{}", dir.display());
        check(&live, true);
        check(&dead, false);
        check(&other, true);
        check(&making, true);
        check(&provisional, true);
        // The live one's lock is still held by its owner after the sweep looked at it.
        assert!(abandoned_lock(&live).is_none());
    }

    #[test]
    fn a_live_sessions_directory_survives_a_sweep_and_goes_when_it_ends() {
        let parent = tempfile::tempdir().unwrap();
        let dir = tempfile::Builder::new()
            .prefix(SOCKET_DIR_PREFIX)
            .tempdir_in(parent.path())
            .unwrap();
        let lock = hold_owner_lock(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        sweep_stale(parent.path());
        assert!(path.join(OWNER_LOCK).exists());
        // Its process killed: the directory stays behind, the lock is let go.
        std::mem::forget(dir);
        drop(lock);
        sweep_stale(parent.path());
        assert!(!path.exists());
    }
}
