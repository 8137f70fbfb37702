//! The pinned CLIs in `target/e2e/clis`, installed with npm when missing or at another
//! version (a kept cache makes this a no-op).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use forge_cli::offline::{PinnedCli, missing_clis_and_agents, npm_install_args};

use super::say;

pub fn ensure(clis_dir: &Path) -> anyhow::Result<()> {
    let missing = missing_clis_and_agents(clis_dir);
    if missing.is_empty() {
        say(&format!("pinned CLIs present in {}", clis_dir.display()));
        return Ok(());
    }
    let specs: Vec<String> = missing.iter().map(PinnedCli::spec).collect();
    say(&format!(
        "installing {} into {}",
        specs.join(" "),
        clis_dir.display()
    ));
    std::fs::create_dir_all(clis_dir)?;
    let status = Command::new("npm")
        .args(npm_install_args(clis_dir))
        .args(missing.iter().map(PinnedCli::spec))
        .status()
        .context("cannot run npm (install Node.js and npm)")?;
    let still = missing_clis_and_agents(clis_dir);
    if !status.success() || !still.is_empty() {
        let specs: Vec<String> = still.iter().map(PinnedCli::spec).collect();
        bail!(
            "npm install failed ({status}); still missing: {}",
            specs.join(" ")
        );
    }
    Ok(())
}
