//! Capturing the exact argv and environment forge gives a CLI: the configured binary becomes
//! a two-line `sh` wrapper that saves both, then `exec`s the real CLI (same pid, same stdio).
//! Used by `--record` (the fixtures' `.meta.json`) and by the TTFE benchmark (to replay the
//! identical invocation without forge).

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const ARGV_FILE: &str = "cli-argv.nul";
const ENV_FILE: &str = "cli-env.nul";

/// Writes `<dir>/cli-wrapper.sh` running `real`, capturing into `dir`; returns its path.
///
/// # Errors
/// The I/O error of writing it; `InvalidInput` for a path with a single quote.
pub fn wrap(real: &Path, dir: &Path) -> io::Result<PathBuf> {
    let quote = |p: &Path| -> io::Result<String> {
        let s = p.to_string_lossy();
        if s.contains('\'') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("path with a quote: {s}"),
            ));
        }
        Ok(format!("'{s}'"))
    };
    let (real_q, argv_q, env_q) = (
        quote(real)?,
        quote(&dir.join(ARGV_FILE))?,
        quote(&dir.join(ENV_FILE))?,
    );
    // Probes (`--version`, `auth status`) pass through uncaptured: only the run is recorded.
    let script = format!(
        "#!/bin/sh\n\
         case \"$1\" in --version|-v|-V|version|auth|login) exec {real_q} \"$@\";; esac\n\
         printf '%s\\0' \"$@\" > {argv_q}\n\
         env -0 > {env_q}\n\
         exec {real_q} \"$@\"\n"
    );
    let path = dir.join("cli-wrapper.sh");
    std::fs::create_dir_all(dir)?;
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// The argv (without the program) and environment the wrapper in `dir` last saw.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

pub fn read(dir: &Path) -> Option<Captured> {
    let split = |name: &str| -> Option<Vec<String>> {
        let bytes = std::fs::read(dir.join(name)).ok()?;
        // Every item ends with a NUL: the piece after the last one is not an item, but an
        // empty piece before it is (gemini's `-p ""`).
        let mut items: Vec<String> = bytes
            .split(|b| *b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        items.pop();
        Some(items)
    };
    let args = split(ARGV_FILE)?;
    let env = split(ENV_FILE)?
        .into_iter()
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_owned(), v.to_owned()))
        })
        .collect();
    Some(Captured { args, env })
}

/// Variables `sh` sets for itself.
const SHELL_OWN: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];

/// The variables forge set or changed for the CLI: those not inherited as they are from
/// this process (forge's own `FORGE_*` aside).
pub fn set_by_forge(env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    env.iter()
        .filter(|(k, v)| {
            !k.starts_with("FORGE_")
                && !SHELL_OWN.contains(&k.as_str())
                && std::env::var(k.as_str()).ok().as_ref() != Some(*v)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
