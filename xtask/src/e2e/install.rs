//! The pinned CLIs in `target/e2e/clis`, installed with npm when missing or at another
//! version (a kept cache makes this a no-op); quietly, as the demo does.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;

use forge_cli::npm_install;
use forge_cli::offline::missing_clis_and_agents;

use super::say;

pub fn ensure(clis_dir: &Path) -> anyhow::Result<()> {
    let Some(plan) = npm_install::plan(clis_dir, missing_clis_and_agents) else {
        say(&format!("pinned CLIs present in {}", clis_dir.display()));
        return Ok(());
    };
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "e2e: {}", plan.line());
    let _ = stderr.flush();
    match npm_install::install(OsStr::new("npm"), clis_dir, missing_clis_and_agents) {
        Ok(done) => {
            let _ = writeln!(stderr, "{}", done.line());
            Ok(())
        }
        Err(failed) => {
            let _ = writeln!(stderr, "failed");
            Err(failed.into())
        }
    }
}
