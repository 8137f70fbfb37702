//! The hexagon's hard lines, checked from `cargo metadata` and the sources on every
//! `cargo test` (rust-analyzer's tidy-as-a-test habit).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Inner to outer. A crate may depend on its own layer or inner ones. The driving adapters
/// (the HTTP server, the command line) sit outside app; cli composes the server, never the
/// other way round (`the_server_never_depends_on_the_cli`).
fn layer_of(manifest: &Path, root: &Path) -> Option<(&'static str, u8)> {
    let first = manifest.strip_prefix(root).ok()?.components().next()?;
    match first.as_os_str().to_str()? {
        "domain" => Some(("domain", 0)),
        "ports" => Some(("ports", 1)),
        "adapters" => Some(("adapters", 2)),
        "app" => Some(("app", 3)),
        "server" => Some(("server", 4)),
        "cli" => Some(("cli", 4)),
        _ => None,
    }
}

struct Package {
    name: String,
    manifest: PathBuf,
    /// (dependency name, kind) for normal dependencies only.
    normal_deps: Vec<String>,
}

fn packages() -> Vec<Package> {
    let meta = metadata();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap().to_owned(),
            manifest: PathBuf::from(p["manifest_path"].as_str().unwrap()),
            normal_deps: p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

#[test]
fn dependency_arrows_point_inward() {
    let root = workspace_root();
    let pkgs = packages();
    let layers: BTreeMap<&str, (&str, u8)> = pkgs
        .iter()
        .filter_map(|p| layer_of(&p.manifest, &root).map(|l| (p.name.as_str(), l)))
        .collect();
    let mut outward = Vec::new();
    for p in &pkgs {
        let Some((from_name, from)) = layers.get(p.name.as_str()).copied() else {
            continue;
        };
        for dep in &p.normal_deps {
            if let Some((to_name, to)) = layers.get(dep.as_str()).copied() {
                if to > from {
                    outward.push(format!("{} ({from_name}) -> {dep} ({to_name})", p.name));
                }
            }
        }
    }
    assert!(
        outward.is_empty(),
        "dependency arrows must point inward:\n{}",
        outward.join("\n")
    );
}

/// Runtime and I/O crates: only the adapters that do I/O (process, fs, fakemodel, …), app
/// and cli may name them.
const RUNTIME_CRATES: [&str; 8] = [
    "rusqlite",
    "tokio",
    "tokio-util",
    "nix",
    "libc",
    "axum",
    "reqwest",
    "hyper",
];

/// The normal dependencies of `package` that `allowed` refuses.
fn refused_deps(package: &str, allowed: impl Fn(&str) -> bool) -> Vec<String> {
    packages()
        .into_iter()
        .filter(|p| p.name == package)
        .flat_map(|p| p.normal_deps)
        .filter(|d| !allowed(d))
        .collect()
}

#[test]
fn the_server_never_depends_on_the_cli() {
    let cli = refused_deps("forge-server", |d| d != "forge-cli");
    assert!(
        cli.is_empty(),
        "forge-server is a driving adapter beside the command line; cli composes it, it never names cli"
    );
    let all = packages();
    let server = all.iter().find(|p| p.name == "forge-server");
    assert!(server.is_some(), "forge-server is a workspace member");
    let named: Vec<&String> = server
        .into_iter()
        .flat_map(|p| &p.normal_deps)
        .filter(|d| d.starts_with("forge-adapter-"))
        .collect();
    assert!(
        named.is_empty(),
        "forge-server receives adapters through the composition root's state, it names none: {named:?}"
    );
}

#[test]
fn domain_depends_on_pure_crates_only_and_ports_name_no_runtime() {
    let impure = refused_deps("forge-domain", |d| {
        ["serde", "serde_json", "thiserror"].contains(&d)
    });
    assert!(
        impure.is_empty(),
        "forge-domain must stay pure; it depends on {impure:?}"
    );
    let bad = refused_deps("forge-ports", |d| !RUNTIME_CRATES.contains(&d));
    assert!(
        bad.is_empty(),
        "forge-ports names no runtime or I/O crate; it depends on {bad:?}"
    );
}

#[test]
fn provider_adapters_are_translators_without_a_runtime() {
    for translator in [
        "forge-adapter-claude",
        "forge-adapter-codex",
        "forge-adapter-gemini",
        "forge-adapter-acp",
        "forge-adapter-support",
    ] {
        let bad = refused_deps(translator, |d| !RUNTIME_CRATES.contains(&d));
        assert!(
            bad.is_empty(),
            "{translator} translates and never runs anything; it depends on {bad:?}"
        );
    }
}

#[test]
fn only_the_mcp_adapter_speaks_mcp() {
    let speakers: Vec<String> = packages()
        .into_iter()
        .filter(|p| p.normal_deps.iter().any(|d| d == "rmcp"))
        .map(|p| p.name)
        .collect();
    assert_eq!(
        speakers,
        ["forge-adapter-mcp"],
        "rmcp belongs to adapters/mcp"
    );
}

#[test]
fn domain_sources_do_no_io() {
    let banned = [
        "std::fs",
        "std::process",
        "std::net",
        "std::env::var",
        "tokio",
        "SystemTime::now",
        "Instant::now",
        "std::thread::sleep",
    ];
    let mut hits = Vec::new();
    for file in rust_files(&workspace_root().join("domain/src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for b in banned {
                if code.contains(b) {
                    hits.push(format!("{}:{}: {b}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "forge-domain must not do I/O:\n{}",
        hits.join("\n")
    );
}

#[test]
fn top_level_holds_exactly_the_design_card() {
    let allowed = [
        "Cargo.toml",
        "Cargo.lock",
        "domain",
        "ports",
        "adapters",
        "app",
        "server",
        "cli",
        "xtask",
        "README.md",
        "ARCHITECTURE.md",
        ".ci",
        "docs",
        ".cargo",
        ".git",
        ".gitignore",
        "target",
        "clippy.toml",
        "rustfmt.toml",
        "rust-toolchain.toml",
        "LICENSE",
        ".forgecode",
        ".config",
    ];
    let extra: Vec<String> = std::fs::read_dir(workspace_root())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    assert!(extra.is_empty(), "unexpected top-level entries: {extra:?}");
}

#[test]
fn every_crate_uses_workspace_lints() {
    let missing: Vec<String> = packages()
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(&p.manifest).unwrap();
            !text.contains("[lints]\nworkspace = true")
        })
        .map(|p| p.name)
        .collect();
    assert!(
        missing.is_empty(),
        "crates without `[lints] workspace = true`: {missing:?}"
    );
}

#[test]
fn no_stubs_or_ignored_tests() {
    let needles = [
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
        concat!("#[", "ignore"),
    ];
    let mut hits = Vec::new();
    let root = workspace_root();
    for dir in [
        "domain", "ports", "adapters", "app", "server", "cli", "xtask",
    ] {
        for file in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if needles.iter().any(|needle| line.contains(needle)) {
                    hits.push(format!("{}:{}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "stubs or ignored tests:\n{}",
        hits.join("\n")
    );
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "node_modules" || name == "fixtures" {
            continue;
        }
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}
