//! Whether this machine can confine a run: bubblewrap present, user namespaces allowed, and
//! an `env` that can set signal dispositions (GNU coreutils ≥ 8.31).

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_ports::{Invocation, ProcessRunner};

use crate::probe_cache;

/// The mechanism found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mechanism {
    pub bwrap: PathBuf,
    /// `bubblewrap 0.8.0`.
    pub version: String,
    /// coreutils' `env`: the outer bwrap ignores SIGINT/SIGTERM (so the kill ladder's
    /// graceful signals reach the agent, not the sandbox around it) and the agent gets them
    /// back at their defaults.
    pub env: PathBuf,
}

/// Why not, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub reason: String,
    pub fix: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the sandbox is not available: {}. Fix: {}; or run unconfined with --sandbox off \
             ([sandbox] mode = \"off\")",
            self.reason, self.fix
        )
    }
}

const INSTALL: &str = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; \
                       Fedora: dnf install bubblewrap), or point [sandbox] bwrap at it";
const USERNS: &str = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; \
                      on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0)";

/// Looks for bubblewrap (`bwrap`: a path, or a name on PATH) and tries one sandbox — unless
/// `kept` (a file) holds a success for this very machine state ([`crate::probe_cache`]).
///
/// # Errors
/// [`Unavailable`] with the reason and the fix.
pub async fn probe(
    runner: &dyn ProcessRunner,
    bwrap: &Path,
    kept: Option<&Path>,
) -> Result<Mechanism, Unavailable> {
    let timeout = Duration::from_secs(10);
    let Some(bwrap) = runner.locate(bwrap) else {
        return Err(Unavailable {
            reason: format!("bubblewrap ({}) is not installed", bwrap.display()),
            fix: INSTALL.to_owned(),
        });
    };
    let Some(env) = runner.locate(Path::new("env")) else {
        return Err(Unavailable {
            reason: "no `env` program on PATH".to_owned(),
            fix: "install coreutils".to_owned(),
        });
    };
    let key = kept.and_then(|_| probe_cache::machine_key(&bwrap, &env));
    if let (Some(file), Some(key)) = (kept, &key) {
        if let Some(version) = probe_cache::read(file, key) {
            return Ok(Mechanism {
                bwrap,
                version,
                env,
            });
        }
    }
    let version = runner
        .output(
            Invocation::new(&bwrap, vec!["--version".to_owned()], "/"),
            timeout,
        )
        .await
        .map(|out| out.stdout.trim().to_owned())
        .unwrap_or_default();
    let trial: Vec<String> = [
        "--ignore-signal=INT,TERM",
        path_text(&bwrap).as_str(),
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        path_text(&env).as_str(),
        "--default-signal=INT,TERM",
        "true",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let out = runner
        .output(Invocation::new(&env, trial, "/"), timeout)
        .await
        .map_err(|err| Unavailable {
            reason: format!("bubblewrap could not be started: {err}"),
            fix: INSTALL.to_owned(),
        })?;
    if out.code != Some(0) {
        let stderr = out.stderr.trim();
        let fix = if stderr.contains("unrecognized option") || stderr.contains("invalid option") {
            "install GNU coreutils 8.31 or newer (env --default-signal)".to_owned()
        } else {
            USERNS.to_owned()
        };
        return Err(Unavailable {
            reason: format!("a trial sandbox failed: {stderr}"),
            fix,
        });
    }
    if let (Some(file), Some(key)) = (kept, &key) {
        probe_cache::write(file, key, &version);
    }
    Ok(Mechanism {
        bwrap,
        version,
        env,
    })
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
