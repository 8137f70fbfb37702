//! `cargo xtask man`: man pages from the CLI's clap definition, so they never drift from
//! `--help`. Writes `target/man/forge-code-agent.1` and `forge-code-agent-<sub>.1`.

use std::path::Path;

use anyhow::Context;

use crate::workspace_root;

pub fn run() -> anyhow::Result<()> {
    let dir = workspace_root().join("target").join("man");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let command = forge_cli::command();
    write_page(&dir, "forge-code-agent", command.clone())?;
    // Hidden subcommands (`__sandbox-bridge`, forge's own) get no page.
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        // clap names are `&'static str` without its `string` feature; xtask is short-lived.
        let name: &'static str =
            Box::leak(format!("forge-code-agent-{}", sub.get_name()).into_boxed_str());
        write_page(&dir, name, sub.clone().name(name))?;
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "man pages written to {}", dir.display());
    Ok(())
}

fn write_page(dir: &Path, name: &str, command: clap::Command) -> anyhow::Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut bytes = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut bytes)
        .with_context(|| format!("rendering {name}"))?;
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}
