//! Installing the pinned CLIs quietly: npm's engine warnings, install-script notices and
//! upgrade notices say nothing a forge user can act on, so its output is kept and shown only
//! when the install fails. The caller says in one line what is installed and how long it
//! took ([`Installing::line`] and [`Installed::line`]).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{PinnedCli, npm_install_args};

/// An install about to start: what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installing {
    pub specs: Vec<String>,
    pub dir: String,
}

impl Installing {
    /// `installing a@1 b@2 into DIR…` (the caller ends the line with [`Installed::line`]).
    pub fn line(&self) -> String {
        format!("installing {} into {}… ", self.specs.join(" "), self.dir)
    }
}

/// A finished install.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Installed {
    pub took: Duration,
}

impl Installed {
    /// `done in 27.5 s`.
    pub fn line(&self) -> String {
        format!("done in {:.1} s", self.took.as_secs_f64())
    }
}

/// npm failed, or left a pinned CLI missing; carries npm's own output.
#[derive(Debug, thiserror::Error)]
#[error("npm install into {dir} failed ({status}); missing: {missing}\nnpm said:\n{output}")]
pub struct InstallFailed {
    pub dir: String,
    pub status: String,
    pub missing: String,
    pub output: String,
}

/// Which pinned packages a caller needs: [`crate::missing_clis`] for the demo,
/// [`crate::missing_clis_and_agents`] for the e2e suite (the ACP agents too).
pub type MissingPins = fn(&Path) -> Vec<PinnedCli>;

/// What [`install`] would install into `clis_dir`; `None` when every pinned package is there.
pub fn plan(clis_dir: &Path, missing: MissingPins) -> Option<Installing> {
    let missing = missing(clis_dir);
    (!missing.is_empty()).then(|| Installing {
        specs: missing.iter().map(PinnedCli::spec).collect(),
        dir: clis_dir.display().to_string(),
    })
}

/// Runs `npm` (the program, normally `"npm"`) to install every pinned CLI into `clis_dir`,
/// its output captured, and checks that each one is there afterwards.
///
/// # Errors
/// [`InstallFailed`] when npm cannot start, exits non-zero, or a CLI is still missing; the
/// error carries npm's stdout and stderr.
pub fn install(
    npm: &OsStr,
    clis_dir: &Path,
    missing: MissingPins,
) -> Result<Installed, InstallFailed> {
    let started = Instant::now();
    let failed = |status: String, output: String| InstallFailed {
        dir: clis_dir.display().to_string(),
        status,
        missing: missing(clis_dir)
            .iter()
            .map(PinnedCli::spec)
            .collect::<Vec<_>>()
            .join(" "),
        output,
    };
    std::fs::create_dir_all(clis_dir)
        .map_err(|e| failed(format!("cannot create the directory: {e}"), String::new()))?;
    let out = Command::new(npm)
        .args(npm_install_args(clis_dir))
        .args(missing(clis_dir).iter().map(PinnedCli::spec))
        .args(QUIET)
        .env("npm_config_update_notifier", "false")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            failed(
                format!(
                    "cannot run {}: {e}; install Node.js, it ships npm",
                    npm.to_string_lossy()
                ),
                String::new(),
            )
        })?;
    if !out.status.success() || !missing(clis_dir).is_empty() {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        return Err(failed(out.status.to_string(), output));
    }
    Ok(Installed {
        took: started.elapsed(),
    })
}

/// npm flags for an install nobody watches: errors only, no progress bar, no upgrade notice.
const QUIET: [&str; 3] = ["--loglevel=error", "--no-progress", "--no-update-notifier"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_where_and_how_long() {
        let installing = Installing {
            specs: vec![
                "@openai/codex@0.169.0".into(),
                "@google/gemini-cli@0.61.0".into(),
            ],
            dir: "/c".into(),
        };
        assert_eq!(
            installing.line(),
            "installing @openai/codex@0.169.0 @google/gemini-cli@0.61.0 into /c… "
        );
        let installed = Installed {
            took: Duration::from_millis(27_460),
        };
        assert_eq!(installed.line(), "done in 27.5 s");
    }
}
