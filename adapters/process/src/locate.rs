//! Finding the program to run, before anything is spawned.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_ports::{EnvSpec, Invocation};

/// `program` itself when it contains a `/` and is a file (relative to forge's current
/// directory), else the first match on `path_var` (or forge's PATH when `None`).
pub(crate) fn locate_in(program: &Path, path_var: Option<OsString>) -> Option<PathBuf> {
    if program.as_os_str().is_empty() {
        return None;
    }
    if program.to_string_lossy().contains('/') {
        return program
            .is_file()
            .then(|| std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf()));
    }
    let path_var = path_var.or_else(|| std::env::var_os("PATH"))?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    which::which_in(program, Some(path_var), cwd).ok()
}

/// The PATH the child will see, which is where its program is looked up.
fn child_path(env: &EnvSpec) -> Option<OsString> {
    if let Some(path) = env.set.get("PATH") {
        return Some(path.into());
    }
    if !env.inherit || env.remove.iter().any(|name| name == "PATH") {
        return Some(OsString::new());
    }
    None
}

/// The absolute program path for `invocation`, or `ExecutableNotFound` with its hint.
///
/// # Errors
/// [`ForgeError::ExecutableNotFound`].
pub(crate) fn resolve_program(invocation: &Invocation) -> Result<PathBuf, ForgeError> {
    locate_in(&invocation.program, child_path(&invocation.env))
        .ok_or_else(|| not_found(&invocation.program, invocation.install_hint.as_deref()))
}

pub(crate) fn not_found(program: &Path, hint: Option<&str>) -> ForgeError {
    let program = program.display().to_string();
    let hint = hint.map_or_else(
        || format!("install {program} or put it on PATH"),
        str::to_owned,
    );
    ForgeError::ExecutableNotFound { program, hint }
}
