//! `cargo xtask ci`: the checks a change must pass, in the order that fails fastest.

use std::process::Command;

use anyhow::{Context, bail};

use crate::workspace_root;

/// Each step is one cargo invocation; the first failure stops the sequence.
const STEPS: &[&[&str]] = &[
    &["fmt", "--all", "--", "--check"],
    &[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ],
    &["test", "--workspace"],
];

pub fn run() -> anyhow::Result<()> {
    // Agents run in bubblewrap by default (issue 31): the tests that start one need it.
    crate::e2e::web::ensure_apt(&["bwrap"], &["bubblewrap"])?;
    for args in STEPS {
        cargo(args)?;
    }
    // Last: the real CLIs end to end (npm installs them on first use; needs the registry).
    status_line("cargo xtask e2e");
    crate::e2e::run(&crate::e2e::E2eArgs {
        record: false,
        latest: false,
        provider: Vec::new(),
        scenario: Vec::new(),
        group: Vec::new(),
        list: false,
        jobs: 4,
    })
}

fn cargo(args: &[&str]) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let shown = format!("cargo {}", args.join(" "));
    status_line(&shown);
    let status = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn status_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "==> {text}");
}
