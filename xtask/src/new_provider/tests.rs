use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

#[test]
fn names_are_checked() {
    let check = |name: &str, ok: bool| assert_eq!(check_name(name).is_ok(), ok, "{name:?}");
    check("my-cli", true);
    check("kimi", true);
    check("qwen2", true);
    // Look-alikes that would break a crate name, a path or a provider id.
    check("", false);
    check("My-cli", false);
    check("my_cli", false);
    check("2cli", false);
    check("-cli", false);
    check("cli-", false);
    check("my--cli", false);
    check("../evil", false);
    check("a b", false);
}

#[test]
fn names_become_rust_names() {
    assert_eq!(type_name("my-cli"), "MyCli");
    assert_eq!(type_name("kimi"), "Kimi");
    assert_eq!(crate_name("my-cli"), "forge_adapter_my_cli");
}

#[test]
fn lines_go_after_the_last_of_their_kind() {
    let text = "[a]\nmembers = [\n    \"adapters/x\",\n    \"adapters/y\",\n    \"app\",\n]\n";
    assert_eq!(
        insert_after_last(text, "\"adapters/", "\"adapters/z\",").ok(),
        Some(
            "[a]\nmembers = [\n    \"adapters/x\",\n    \"adapters/y\",\n    \"adapters/z\",\n    \"app\",\n]\n"
                .to_owned()
        )
    );
    assert!(insert_after_last(text, "forge-adapter-", "x").is_err());
}

/// The workspace copied for the generator: the files it edits are real copies, everything
/// else a symlink into this workspace (so the generated crate builds against the real
/// domain, ports and support crates).
fn workspace_copy(dir: &Path) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let edited = [
        "Cargo.toml",
        "Cargo.lock",
        "cli/Cargo.toml",
        "cli/src/compose.rs",
    ];
    for entry in walk_shallow(&root, &edited)? {
        let (from, rel, real) = entry;
        let to = dir.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if real {
            std::fs::copy(&from, &to)?;
        } else {
            std::os::unix::fs::symlink(&from, &to)?;
        }
    }
    Ok(())
}

/// (source, path relative to the root, copy it?) for every top-level entry and every entry
/// of `adapters/`, `cli/` and `cli/src/`, skipping `target` and `.git`.
fn walk_shallow(root: &Path, edited: &[&str]) -> anyhow::Result<Vec<(PathBuf, PathBuf, bool)>> {
    let opened = ["adapters", "cli", "cli/src"];
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel_dir) = dirs.pop() {
        for entry in std::fs::read_dir(root.join(&rel_dir))? {
            let entry = entry?;
            let rel = rel_dir.join(entry.file_name());
            let shown = rel.to_string_lossy().into_owned();
            if shown == "target" || shown == ".git" {
                continue;
            }
            if opened.contains(&shown.as_str()) {
                dirs.push(rel);
            } else {
                out.push((entry.path(), rel, edited.contains(&shown.as_str())));
            }
        }
    }
    Ok(out)
}

/// The generator on a copy of this workspace: the files and edits it promises, then the
/// generated crate's own `cargo test` (its decode snapshot test included) passes there.
#[test]
fn a_generated_provider_builds_and_passes_its_tests() {
    let dir = std::env::temp_dir().join(format!("forge-new-provider-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    workspace_copy(&dir).unwrap();

    let written = generate(&dir, "my-cli").unwrap();
    let shown: Vec<String> = written
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    insta::assert_yaml_snapshot!(shown);
    let text = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    assert!(text("Cargo.toml").contains("    \"adapters/my-cli\",\n"));
    assert!(
        text("Cargo.toml").contains("\nforge-adapter-my-cli = { path = \"adapters/my-cli\" }\n")
    );
    assert!(text("cli/Cargo.toml").contains("\nforge-adapter-my-cli = { workspace = true }\n"));
    assert!(text("cli/src/compose.rs").contains(
        "        .register(\n            forge_adapter_my_cli::provider_id(),\n            \
         forge_adapter_my_cli::provider,\n        )\n        .register_kind("
    ));
    // A second run refuses and changes nothing.
    let before = text("Cargo.toml");
    assert!(generate(&dir, "my-cli").is_err());
    assert_eq!(text("Cargo.toml"), before);

    // Its own target directory: the outer `cargo test` holds this workspace's.
    let target = crate::workspace_root().join("target/new-provider-test");
    let out = Command::new(env!("CARGO"))
        .args(["test", "--offline", "-p", "forge-adapter-my-cli"])
        .env("CARGO_TARGET_DIR", &target)
        .env("INSTA_UPDATE", "no")
        .env("CARGO_INCREMENTAL", "0")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo test failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test every_fixture_decodes ... ok"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
