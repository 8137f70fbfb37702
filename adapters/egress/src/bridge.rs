//! Inside the sandbox: the bridge is the sandbox's init. It listens on the routes' and the
//! proxy's addresses on the sandbox's own loopback, relays each connection to its Unix
//! socket (bind-mounted from forge), runs the CLI and hands it the signals it gets.
//!
//! It is the one process of a run that forge-adapter-process does not spawn: it is started
//! by it (bubblewrap is the child of the `ProcessRunner`), and starts the CLI itself because
//! it must run inside the sandbox, between bubblewrap and the CLI, where forge's runtime is
//! not. It keeps that runner's rules: the CLI leads its own process group, every
//! SIGINT/SIGTERM/SIGHUP forge's kill ladder sends is handed to that group (once: the CLI is
//! not in the group forge signals, so it never gets a signal twice), and when the CLI exits
//! what is left of its group is killed and the bridge exits with the CLI's status (`128+N`
//! for a signal, as bubblewrap and shells report it). SIGKILL ends the bridge; the sandbox's
//! PID namespace then ends everything in it.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::ExitStatusExt;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::net::{TcpListener, UnixStream};
use tokio::signal::unix::{SignalKind, signal};

use crate::spec::BridgeSpec;

/// The bridge could not set itself up (`env` and `docker run` use the same codes).
const BRIDGE_FAILED: i32 = 125;
const NOT_EXECUTABLE: i32 = 126;
const NOT_FOUND: i32 = 127;

/// Pause after a failed accept (file descriptors exhausted), instead of spinning.
pub(crate) const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `argv` with the spec's listeners up; returns its exit code.
#[must_use]
pub fn run_bridge(spec: &BridgeSpec, argv: &[OsString]) -> i32 {
    let Some((program, args)) = argv.split_first() else {
        return fail("no command to run after `--`");
    };
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(bridge(spec, program, args)),
        Err(e) => fail(&format!("cannot start its runtime: {e}")),
    }
}

fn fail(message: &str) -> i32 {
    let _ = writeln!(std::io::stderr(), "forge sandbox bridge: {message}");
    BRIDGE_FAILED
}

async fn bridge(spec: &BridgeSpec, program: &OsString, args: &[OsString]) -> i32 {
    // First, so a cancel that arrives while the CLI starts is handed on, not lost.
    let mut signals = Vec::new();
    for (kind, sig) in [
        (SignalKind::interrupt(), Signal::SIGINT),
        (SignalKind::terminate(), Signal::SIGTERM),
        (SignalKind::hangup(), Signal::SIGHUP),
    ] {
        match signal(kind) {
            Ok(stream) => signals.push((stream, sig)),
            Err(e) => return fail(&format!("cannot handle {sig}: {e}")),
        }
    }
    // Listening before the CLI starts: its first request finds the route up.
    for listener in &spec.listen {
        let tcp = match TcpListener::bind(listener.addr).await {
            Ok(tcp) => tcp,
            Err(e) => return fail(&format!("cannot listen on {}: {e}", listener.addr)),
        };
        tokio::spawn(relay_each(
            tcp,
            listener.socket.clone(),
            listener.reset_on_close,
        ));
    }

    let mut child = match tokio::process::Command::new(program)
        .args(args)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "forge sandbox bridge: cannot run {}: {e}",
                program.to_string_lossy()
            );
            return if e.kind() == std::io::ErrorKind::NotFound {
                NOT_FOUND
            } else {
                NOT_EXECUTABLE
            };
        }
    };
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);

    let status = loop {
        let [(int, _), (term, _), (hup, _)] = &mut signals[..] else {
            break child.wait().await;
        };
        let forwarded = tokio::select! {
            status = child.wait() => break status,
            _ = int.recv() => Signal::SIGINT,
            _ = term.recv() => Signal::SIGTERM,
            _ = hup.recv() => Signal::SIGHUP,
        };
        if let Some(group) = group {
            let _ = killpg(group, forwarded);
        }
    };
    // Nothing of the CLI outlives it (a daemon it left behind in its group).
    if let Some(group) = group {
        let _ = killpg(group, Signal::SIGKILL);
    }
    match status {
        Ok(status) => status
            .code()
            .or_else(|| status.signal().map(|n| 128 + n))
            .unwrap_or(BRIDGE_FAILED),
        Err(e) => fail(&format!("cannot wait for the command: {e}")),
    }
}

/// Accepts connections on the sandbox's loopback and relays each to the socket.
async fn relay_each(tcp: TcpListener, socket: std::path::PathBuf, reset_on_close: bool) {
    loop {
        let inside = match tcp.accept().await {
            Ok((inside, _)) => inside,
            Err(e) => {
                // Out of file descriptors, most likely: wait for some to be closed rather
                // than spin (axum does the same).
                tracing::debug!("bridge: accept failed: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let _ = inside.set_nodelay(true);
        let socket = socket.clone();
        tokio::spawn(async move {
            match UnixStream::connect(&socket).await {
                Ok(outside) if reset_on_close => {
                    crate::relay::pipe_resetting(inside, outside).await
                }
                Ok(outside) => crate::relay::pipe(inside, outside).await,
                Err(e) => tracing::debug!("bridge: {}: {e}", socket.display()),
            }
        });
    }
}
