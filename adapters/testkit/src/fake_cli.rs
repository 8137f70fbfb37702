//! Finding (and if needed building) the `fake-agent-cli` binary from another crate's tests.
//!
//! `env!("CARGO_BIN_EXE_…")` only names binaries of the package under test, and cargo does
//! not build a dependency's binaries. So [`path`] looks next to the running test executable
//! (`target/<profile>/deps/…` → `target/<profile>/fake-agent-cli`) and runs
//! `cargo build -p forge-testkit --bin fake-agent-cli` once per process when the binary is
//! missing or older than its source (a stale binary is used, with a warning, when that build
//! fails). `FORGE_FAKE_AGENT_CLI=/path` overrides all of this.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

const BIN: &str = "fake-agent-cli";

/// The fake CLI's path, built on first use. Panics (test support) when it cannot be built.
pub fn path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(locate_or_build).clone()
}

fn locate_or_build() -> PathBuf {
    if let Some(path) = std::env::var_os("FORGE_FAKE_AGENT_CLI") {
        return PathBuf::from(path);
    }
    let profile_dir = profile_dir();
    let binary = profile_dir.join(BIN);
    if !is_fresh(&binary) {
        if let Err(why) = build(&profile_dir) {
            // A stale binary beats none: the workspace may be mid-edit elsewhere.
            assert!(binary.is_file(), "{why}");
            let _ = writeln!(std::io::stderr(), "warning: using a stale {BIN}: {why}");
        }
    }
    binary
}

/// `target/<profile>` of the running executable (a test in `deps/`, or a binary).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|err| panic!("current_exe: {err}"));
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.pop();
    }
    dir
}

/// Exists and is newer than the source it is built from.
fn is_fresh(binary: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/fake_agent_cli.rs");
    match (modified(binary), modified(&source)) {
        (Some(bin), Some(src)) => bin >= src,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

fn build(profile_dir: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .args(["build", "--quiet", "--bin", BIN, "--manifest-path"])
        .arg(&manifest);
    if profile_dir
        .file_name()
        .is_some_and(|name| name == "release")
    {
        command.arg("--release");
    }
    if let Some(target_dir) = profile_dir.parent() {
        command.arg("--target-dir").arg(target_dir);
    }
    let started = SystemTime::now();
    let status = command
        .status()
        .map_err(|err| format!("running cargo build for {BIN}: {err}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build --bin {BIN} failed ({status}) after {:?}",
            started.elapsed().unwrap_or_default()
        ));
    }
    Ok(())
}
