//! `cargo xtask new-provider NAME`: a new adapter crate that compiles and passes its decode
//! test from the first minute, wired into the workspace and the provider registry.
//!
//! Writes `adapters/NAME` from the templates in `xtask/templates/provider/` (Cargo.toml,
//! `lib.rs` with `ID` / `provider()`, a `Provider` and a `Decoder` skeleton, `fixtures/` with
//! one tiny transcript, a decode snapshot test and its accepted snapshot), then adds the
//! crate to the root `Cargo.toml` (members and `[workspace.dependencies]`), to
//! `cli/Cargo.toml` and one `.register(…)` line to `registry()` in `cli/src/compose.rs`.
//! Every edit is checked before anything is written: an existing crate or a file that no
//! longer has the expected shape stops the command with nothing changed.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

#[derive(Debug, Clone, clap::Args)]
pub struct NewProviderArgs {
    /// The provider's registry name (`[a-z][a-z0-9-]*`): the crate is
    /// `adapters/NAME`, `forge-adapter-NAME`
    pub name: String,
}

/// The templates, with `__name__` (the registry name), `__crate__` (the crate's Rust name)
/// and `__Type__` (the type prefix) to fill in.
const TEMPLATES: [(&str, &str); 7] = [
    (
        "Cargo.toml",
        include_str!("../templates/provider/Cargo.toml.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../templates/provider/lib.rs.tmpl"),
    ),
    (
        "src/decode.rs",
        include_str!("../templates/provider/decode.rs.tmpl"),
    ),
    (
        "src/provider.rs",
        include_str!("../templates/provider/provider.rs.tmpl"),
    ),
    (
        "fixtures/hello.jsonl",
        include_str!("../templates/provider/hello.jsonl.tmpl"),
    ),
    (
        "tests/decode.rs",
        include_str!("../templates/provider/decode_test.rs.tmpl"),
    ),
    (
        "tests/snapshots/decode__hello.snap",
        include_str!("../templates/provider/snapshot.snap.tmpl"),
    ),
];

/// The accepted snapshot of `fixtures/hello.jsonl`'s events (the header is the template's).
const HELLO_EVENTS: &str = include_str!("../templates/provider/hello.events.json");

pub fn run(args: &NewProviderArgs) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let written = generate(&root, &args.name)?;
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for path in &written {
        let shown = path.strip_prefix(&root).unwrap_or(path);
        let _ = writeln!(out, "wrote {}", shown.display());
    }
    let _ = writeln!(
        out,
        "\nnext: cargo test -p forge-adapter-{0}, then docs/adapters.md (record a transcript of \
         the real CLI into adapters/{0}/fixtures/ and make the decoder read it)",
        args.name
    );
    Ok(())
}

/// Creates the crate for `name` under `root` and wires it in. Returns the files written or
/// changed.
///
/// # Errors
/// An invalid name, an existing `adapters/NAME`, a workspace file without the expected
/// anchor (nothing is written then), or an I/O error.
pub fn generate(root: &Path, name: &str) -> anyhow::Result<Vec<PathBuf>> {
    check_name(name)?;
    let dir = root.join("adapters").join(name);
    if dir.exists() {
        bail!("{} exists already", dir.display());
    }
    // All edits computed first, so a missing anchor changes nothing.
    let manifest = root.join("Cargo.toml");
    let cli_manifest = root.join("cli/Cargo.toml");
    let compose = root.join("cli/src/compose.rs");
    let edits = [
        (
            manifest.clone(),
            edit_workspace(&read(&manifest)?, name).context("the root Cargo.toml")?,
        ),
        (
            cli_manifest.clone(),
            insert_after_last(
                &read(&cli_manifest)?,
                "forge-adapter-",
                &format!("forge-adapter-{name} = {{ workspace = true }}"),
            )
            .context("cli/Cargo.toml: no forge-adapter-* dependency line")?,
        ),
        (
            compose.clone(),
            edit_registry(&read(&compose)?, name).context("cli/src/compose.rs")?,
        ),
    ];
    let mut written = Vec::new();
    for (path, template) in TEMPLATES {
        let mut text = fill(template, name);
        if path.ends_with(".snap") {
            text.push_str(HELLO_EVENTS);
        }
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    for (path, text) in edits {
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    format_sources(&written);
    Ok(written)
}

/// rustfmt over the generated Rust files: a name longer or shorter than the templates' may
/// move a line break. Best effort: without rustfmt the files still build.
fn format_sources(written: &[PathBuf]) {
    let sources: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("compose.rs"))
        .collect();
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(sources)
        .stderr(std::process::Stdio::null())
        .status();
}

/// A registry name that is also a crate name and a directory: `[a-z][a-z0-9-]*`, not
/// ending in `-`, and not one of the kinds or crates that exist in every workspace.
fn check_name(name: &str) -> anyhow::Result<()> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !starts || !rest || name.ends_with('-') || name.contains("--") {
        bail!(
            "invalid provider name {name:?}: lowercase letters, digits and single dashes, \
             starting with a letter (e.g. `my-cli`)"
        );
    }
    Ok(())
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// `my-cli` → `MyCli`.
fn type_name(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn crate_name(name: &str) -> String {
    format!("forge_adapter_{}", name.replace('-', "_"))
}

fn fill(template: &str, name: &str) -> String {
    template
        .replace("__name__", name)
        .replace("__crate__", &crate_name(name))
        .replace("__Type__", &type_name(name))
}

/// The root manifest with the crate in `members` (after the last `adapters/` member) and in
/// `[workspace.dependencies]` (after the last internal `forge-adapter-*` entry).
fn edit_workspace(text: &str, name: &str) -> anyhow::Result<String> {
    let text = insert_after_last(text, "\"adapters/", &format!("\"adapters/{name}\","))
        .context("no \"adapters/…\" member")?;
    insert_after_last(
        &text,
        "forge-adapter-",
        &format!("forge-adapter-{name} = {{ path = \"adapters/{name}\" }}"),
    )
    .context("no forge-adapter-* entry in [workspace.dependencies]")
}

/// `registry()` with `.register(forge_adapter_NAME::provider_id(), forge_adapter_NAME::provider)`
/// before the kind-configured providers (or at its end).
fn edit_registry(text: &str, name: &str) -> anyhow::Result<String> {
    let krate = crate_name(name);
    // Laid out as rustfmt lays out its neighbours.
    let line = format!(
        "        .register(\n            {krate}::provider_id(),\n            {krate}::provider,\n        )\n"
    );
    let anchor = text
        .find("        .register_kind(")
        .context("no `.register_kind(` line in registry()")?;
    Ok(format!("{}{line}{}", &text[..anchor], &text[anchor..]))
}

/// `text` with `line` (indented like its neighbour) after the last line that starts, once
/// trimmed, with `prefix`.
fn insert_after_last(text: &str, prefix: &str, line: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(at) = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with(prefix))
    else {
        bail!("no line starting with {prefix:?}");
    };
    let indent: String = lines[at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let mut out = String::with_capacity(text.len() + line.len() + 8);
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        if i == at {
            if !l.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("{indent}{line}\n"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
