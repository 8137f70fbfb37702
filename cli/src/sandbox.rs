//! The sandbox's settings for this forge (issue 31): `[sandbox]` of the user config (a
//! repository's `forge.toml` may not set it), `--sandbox on|off` over it, and the refusal to
//! run unconfined where the machine cannot confine (exit 2, with the reason and the fix).

use std::path::Path;
use std::sync::Arc;

use forge_adapter_process::TokioProcessRunner;
use forge_adapter_sandbox::{SandboxConfig, SandboxedRunner};
use forge_app::config::{PROJECT_FILE, parse_sandbox_config, refuse_project_sandbox};
use forge_domain::sandbox::SandboxMode;

use crate::config_load::user_config_file;
use crate::exit::Failure;

/// The user's `[sandbox]`, `flag` over its mode; refused when `workdir`'s `forge.toml` sets it.
///
/// # Errors
/// [`Failure::Config`] for a bad section or one in the repository's file.
pub fn config(flag: Option<SandboxMode>, workdir: &Path) -> Result<SandboxConfig, Failure> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let mut config = SandboxConfig {
        probe_kept: crate::offline::user_cache_dir(&env).map(|dir| dir.join("sandbox-probe")),
        ..SandboxConfig::default()
    };
    let user = user_config_file();
    if let Some(path) = &user {
        if let Ok(text) = std::fs::read_to_string(path) {
            let found = parse_sandbox_config(&text, path)?;
            config.settings = found.settings;
            if let Some(bwrap) = found.bwrap {
                config.bwrap = bwrap;
            }
        }
        config.forge_private.push(path.clone());
    }
    let project = workdir.join(PROJECT_FILE);
    if let Ok(text) = std::fs::read_to_string(&project) {
        refuse_project_sandbox(&text, &project)?;
    }
    if let Some(mode) = flag {
        config.settings.mode = mode;
    }
    Ok(config)
}

/// The process runner of this forge: the real one, confined as `config` says, the network
/// through forge's egress point.
pub fn runner(config: SandboxConfig) -> Arc<SandboxedRunner> {
    Arc::new(
        SandboxedRunner::new(Arc::new(TokioProcessRunner::new()), config)
            .with_network(Arc::new(crate::egress::confinement())),
    )
}

/// With the mode on, the mechanism must be there: else the run is refused (exit 2).
///
/// # Errors
/// [`Failure::Usage`] with the reason and the fix.
pub async fn require(runner: &SandboxedRunner) -> Result<(), Failure> {
    if runner.mode() == SandboxMode::Off {
        return Ok(());
    }
    runner
        .mechanism()
        .await
        .map(|_| ())
        .map_err(|why| Failure::Usage(why.to_string()))
}
