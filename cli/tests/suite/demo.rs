//! `demo`: a clear exit without Node.js, and (when the pinned CLIs are installed) a real
//! offline task through a real CLI.

use std::path::{Path, PathBuf};

use super::harness::Sandbox;

#[test]
fn without_node_and_npm_the_demo_says_so_and_exits_2() {
    let sandbox = Sandbox::new();
    let empty_path = sandbox.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    sandbox
        .forge()
        .arg("demo")
        .env("PATH", &empty_path)
        .env("XDG_CACHE_HOME", sandbox.dir.path().join("cache"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("needs Node.js and npm"));
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The CLIs `cargo xtask e2e` installs (`FORGE_E2E_CLIS_DIR`, else
/// `<repo>/target/e2e/clis`); `None` (test skipped) when they are not there.
fn installed_clis() -> Option<PathBuf> {
    let dir = std::env::var_os("FORGE_E2E_CLIS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/e2e/clis"));
    let present = forge_cli::offline::missing_clis(&dir).is_empty();
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (present && node).then_some(dir)
}

#[test]
fn the_demo_runs_a_real_cli_against_the_embedded_model() {
    let Some(clis) = installed_clis() else {
        eprintln!("note: pinned CLIs not installed (cargo xtask e2e installs them); skipping");
        return;
    };
    // Not under /tmp: codex refuses to set up its helpers there.
    let cache = repo_root().join("target/cli-tests/demo-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let out = Sandbox::new()
        .forge()
        .args(["demo", "--provider", "claude"])
        .env("FORGE_CLIS_DIR", &clis)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("── claude ──"), "{text}");
    assert!(text.contains("✓ file_write"), "{text}");
    let summary = text.lines().last().unwrap();
    assert!(summary.starts_with("claude"), "{text}");
    assert!(summary.contains("success"), "{summary}");
    assert!(summary.contains("hello.txt"), "{summary}");
}
