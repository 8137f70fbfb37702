//! `task gc`: restore instruction files from crash markers, remove leftover work trees.

use std::io::Write;
use std::sync::Arc;

use forge_app::task::{gc, trim_caches};

use super::TaskGcArgs;
use super::execute::{read_task_config, task_ports};
use crate::compose;
use crate::exit::Failure;
use crate::output::write_json_pretty;

pub async fn run(args: TaskGcArgs) -> Result<u8, Failure> {
    let repo = std::path::absolute(&args.repo).unwrap_or(args.repo);
    let runtime = compose::runtime();
    let config = read_task_config(&repo)?;
    let ports = task_ports(Arc::clone(&runtime.runner), &config.cache);
    let mut report = gc(&ports, &repo, None, args.keep_worktrees)
        .await
        .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    if let Some(cache) = &ports.build_cache {
        trim_caches(
            cache.as_ref(),
            config.cache.max_size_mb.saturating_mul(1024 * 1024),
            &mut report,
        )
        .await
        .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    }
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
        for p in &report.trimmed_caches {
            let _ = writeln!(out, "trimmed build cache {}", p.display());
        }
        if let Some(bytes) = report.cache_bytes {
            let _ = writeln!(
                out,
                "build caches: {} MB (limit {} MB)",
                bytes / (1024 * 1024),
                config.cache.max_size_mb
            );
        }
        if report.restored.is_empty()
            && report.removed_worktrees.is_empty()
            && report.kept_worktrees.is_empty()
            && report.trimmed_caches.is_empty()
        {
            let _ = writeln!(out, "nothing to clean");
        }
    }
    Ok(0)
}
