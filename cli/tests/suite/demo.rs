//! `demo`: a clear exit without Node.js; a provider whose task fails (the testkit's fake
//! CLI, offline) exits 1 with the reason and leaves nothing behind; and, when the pinned
//! CLIs are installed, the task demo and the single-prompt demo through the real claude.

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

fn answers_version(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Directories left under the demo's root (`<cache>/forge-code-agent/demo/`).
fn demo_leftovers(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("forge-code-agent/demo"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_provider_whose_task_fails_exits_1_with_the_reason_and_leaves_nothing() {
    if !["node", "npm", "git"].iter().all(|t| answers_version(t)) {
        eprintln!("note: node, npm or git missing; skipping");
        return;
    }
    let sandbox = Sandbox::new();
    // Every pinned CLI "installed", each one the testkit's fake: no npm, no network. The
    // fake answers the version check and then writes nothing, so the task has no change.
    let clis = sandbox.dir.path().join("clis");
    install_fakes(&clis);
    let cache = sandbox.dir.path().join("cache");
    let out = sandbox
        .forge()
        .args(["demo", "--provider", "claude"])
        .env("FORGE_CLIS_DIR", &clis)
        .env("XDG_CACHE_HOME", &cache)
        .env("FAKE_VERSION", "2.1.330")
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    let reason = stdout
        .lines()
        .find(|l| l.starts_with("claude failed: "))
        .unwrap_or_else(|| panic!("no reason in\n{stdout}\n{stderr}"));
    // The fake writes no file: the pipeline's verdict, and the CLI's own failure, are given.
    assert!(reason.contains("failed (no_changes)"), "{reason}");
    assert!(reason.contains("end-of-run report"), "{reason}");
    let header = stdout
        .lines()
        .find(|l| l.starts_with("provider"))
        .unwrap_or_else(|| panic!("no table in\n{stdout}"));
    assert!(header.contains("same session"), "{header}");
    assert_eq!(demo_leftovers(&cache), Vec::<PathBuf>::new(), "{stderr}");
}

/// Every pinned CLI at its version in `clis`, each one a link to the testkit's fake CLI.
fn install_fakes(clis: &Path) {
    let pinned = forge_cli::offline::PINNED_CLIS
        .into_iter()
        .chain(forge_cli::offline::PINNED_ACP_AGENTS);
    for cli in pinned {
        let package = clis.join("node_modules").join(cli.package);
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(
            package.join("package.json"),
            format!("{{\"version\":\"{}\"}}", cli.version),
        )
        .unwrap();
        let bin = cli.binary(clis);
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(super::harness::fake(), &bin).unwrap();
    }
}

/// `package@version` of everything the demo installs, space-separated.
/// What the demo installs: the CLIs it runs (the ACP agents are the e2e suite's).
fn every_spec() -> String {
    forge_cli::offline::PINNED_CLIS
        .into_iter()
        .map(|c| c.spec())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `bin/npm` that talks as much as npm 11 does on Node 20 (engine warning, install-script
/// notice, summary), then "installs" the fakes of `install_fakes` by copying them into
/// `--prefix`, or fails like an unknown package when `FAKE_NPM_FAIL` is set. Returns a PATH
/// with it first.
fn noisy_npm(root: &Path) -> std::ffi::OsString {
    let tree = root.join("npm-tree");
    install_fakes(&tree);
    let bin = root.join("npm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        r#"#!/bin/sh
[ "$1" = --version ] && {{ echo 11.19.1; exit 0; }}
echo "npm warn EBADENGINE Unsupported engine {{" >&2
echo "npm warn install-scripts 3 packages have install scripts not yet covered" >&2
prefix=
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix=$2; shift; done
if [ -n "$FAKE_NPM_FAIL" ]; then
  echo "npm error code E404" >&2
  echo "npm error 404 Not Found - GET https://registry.npmjs.org/@openai%2fcodex" >&2
  exit 1
fi
cp -a '{}/.' "$prefix/"
echo "added 11 packages in 27s"
"#,
        tree.display()
    );
    let npm = bin.join("npm");
    std::fs::write(&npm, script).unwrap();
    std::fs::set_permissions(&npm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// The first demo installs the CLIs with one line of its own (what, where, how long) and
/// none of npm's chatter; a failed install shows npm's output and stops.
#[test]
fn the_first_demo_installs_quietly_and_shows_npm_only_on_failure() {
    if !["node", "git"].iter().all(|t| answers_version(t)) {
        eprintln!("note: node or git missing; skipping");
        return;
    }
    let sandbox = Sandbox::new();
    let path = noisy_npm(sandbox.dir.path());
    let clis = sandbox.dir.path().join("clis");
    let demo = |fail: bool| {
        let mut cmd = sandbox.forge();
        cmd.args(["demo", "--provider", "claude"])
            .env("PATH", &path)
            .env("FORGE_CLIS_DIR", &clis)
            .env("XDG_CACHE_HOME", sandbox.dir.path().join("cache"))
            .env("FAKE_VERSION", "2.1.330");
        if fail {
            cmd.env("FAKE_NPM_FAIL", "1");
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    let (code, stderr) = demo(true);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("into ") && stderr.contains("… failed\n"),
        "{stderr}"
    );
    for npm_said in ["npm error code E404", "npm warn EBADENGINE"] {
        assert!(stderr.contains(npm_said), "{npm_said} not shown:\n{stderr}");
    }

    let (code, stderr) = demo(false);
    assert_eq!(code, Some(1), "the fake agent changes nothing:\n{stderr}");
    let installing: Vec<&str> = stderr.lines().filter(|l| l.contains("install")).collect();
    assert_eq!(installing.len(), 1, "{stderr}");
    let line = installing[0];
    assert!(
        line.starts_with(&format!("demo: installing {} into ", every_spec()))
            && line.contains("… done in ")
            && line.ends_with(" s"),
        "{line}"
    );
    for chatter in ["npm warn", "added 11 packages"] {
        assert!(!stderr.contains(chatter), "{chatter} shown:\n{stderr}");
    }
}

#[test]
fn the_task_demo_commits_after_a_resumed_correction_with_the_real_cli() {
    let Some(clis) = installed_clis() else {
        eprintln!("note: pinned CLIs not installed (cargo xtask e2e installs them); skipping");
        return;
    };
    // Not under /tmp: codex refuses to set up its helpers there.
    let cache = repo_root().join("target/cli-tests/demo-task-cache");
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir_all(&cache).unwrap();
    let out = Sandbox::new()
        .forge()
        .args(["demo", "--provider", "claude"])
        .env("FORGE_CLIS_DIR", &clis)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(std::time::Duration::from_secs(240))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("provider "))
        .find(|l| l.starts_with("claude "))
        .unwrap_or_else(|| panic!("no claude row in\n{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1..4], ["committed", "2", "yes"], "{row}");
    assert!(row.contains("forge/"), "{row}");
    assert_eq!(demo_leftovers(&cache), Vec::<PathBuf>::new());
}

#[test]
fn the_single_prompt_demo_runs_a_real_cli_against_the_embedded_model() {
    let Some(clis) = installed_clis() else {
        eprintln!("note: pinned CLIs not installed (cargo xtask e2e installs them); skipping");
        return;
    };
    // Not under /tmp: codex refuses to set up its helpers there.
    let cache = repo_root().join("target/cli-tests/demo-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let out = Sandbox::new()
        .forge()
        .args(["demo", "--run", "--provider", "claude"])
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
