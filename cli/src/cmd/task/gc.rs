//! `task gc`: restore instruction files from crash markers, remove leftover work trees.

use std::io::Write;
use std::sync::Arc;

use forge_app::task::gc;

use super::TaskGcArgs;
use super::execute::task_ports;
use crate::compose;
use crate::exit::Failure;
use crate::output::write_json_pretty;

pub async fn run(args: TaskGcArgs) -> Result<u8, Failure> {
    let repo = std::path::absolute(&args.repo).unwrap_or(args.repo);
    let runtime = compose::runtime();
    let ports = task_ports(Arc::clone(&runtime.runner));
    let report = gc(&ports, &repo, None, args.keep_worktrees)
        .await
        .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &report);
    } else {
        for p in &report.restored {
            let _ = writeln!(out, "restored {}", p.display());
        }
        for p in &report.removed_worktrees {
            let _ = writeln!(out, "removed work tree {}", p.display());
        }
        for p in &report.kept_worktrees {
            let _ = writeln!(out, "kept work tree {} (pending approval)", p.display());
        }
        if report == Default::default() {
            let _ = writeln!(out, "nothing to clean");
        }
    }
    Ok(0)
}
