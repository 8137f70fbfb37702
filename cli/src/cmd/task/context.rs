//! `task context`: everything the agent would be given as context for a task — task type,
//! goal, research notes and the repository map ranked by the task, exactly as the
//! instruction file would hold it — without running an agent or changing the repository;
//! with `--baseline`, which validation steps and tests already fail at the base.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use forge_app::task::TaskPipeline;
use forge_app::task::preview::{ContextPreview, preview};
use forge_app::task::preview_baseline::{self, BaselineInputs};
use forge_app::task::validate::StepRunner;
use forge_domain::ForgeError;

use super::TaskContextArgs;
use super::execute::{read_task_config, task_ports};
use crate::compose;
use crate::exit::{self, Failure};
use crate::output::write_json_pretty;
use crate::prompt::read_prompt;
use crate::signals;

pub async fn run(args: TaskContextArgs) -> Result<u8, Failure> {
    let task_text = read_prompt(args.task.as_deref())?;
    let repo = std::path::absolute(&args.repo).unwrap_or_else(|_| args.repo.clone());
    let repo = std::fs::canonicalize(&repo)
        .map_err(|e| Failure::Usage(format!("--repo {}: {e}", repo.display())))?;
    let config = read_task_config(&repo)?;
    let mut spec = args.brief.spec(task_text)?;
    spec.base = args.base;
    spec.context_chars = config.context_chars;
    let runtime = compose::runtime();
    let ports = task_ports(Arc::clone(&runtime.runner), &config.cache);
    let scratch = scratch_dir(&repo);
    // The baseline's steps run as a task's validation does: through the sandboxed runner,
    // each confined to the scratch work tree; Ctrl-C stops the running one.
    let baseline = args.baseline.then(|| BaselineInputs {
        runner: StepRunner {
            runner: Arc::clone(&runtime.runner),
            clock: Arc::clone(&runtime.clock),
            ladder: forge_ports::KillLadder::default(),
            redactor: ports.redactor.clone(),
            step_timeout: Duration::from_millis(config.validation.step_timeout_ms),
            warm: None,
        },
        validation: config.validation.clone(),
        cancel: TaskPipeline::canceller(),
    });
    let watcher = match &baseline {
        Some(b) => Some(signals::watch(b.cancel.clone(), args.json)?),
        None => None,
    };
    let shown = preview(&ports, &repo, &spec, &scratch, baseline.as_ref()).await;
    if let Some(w) = watcher {
        w.abort();
    }
    let shown = shown.map_err(|e| match e {
        ForgeError::InvalidRequest { reason } => Failure::Usage(reason),
        other => Failure::Other(anyhow::anyhow!(other)),
    })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &shown);
    } else {
        let _ = out.write_all(render(&shown).as_bytes());
    }
    Ok(exit::SUCCESS)
}

/// A scratch work tree for `--base`, under forge's folder of the repository (which git
/// already ignores through the repository's exclude file), unique to this process.
fn scratch_dir(repo: &std::path::Path) -> PathBuf {
    repo.join(forge_app::task::WORKTREES_DIR)
        .join(format!("context-{}", std::process::id()))
}

/// The human view: what the agent is told, then the map as the instruction file holds it.
pub(crate) fn render(p: &ContextPreview) -> String {
    let mut s = String::new();
    s.push_str(&format!("task ({}): {}\n", p.task_type.label(), p.task));
    if let Some(t) = &p.goal.title {
        s.push_str(&format!("goal: {t}\n"));
    }
    if let Some(d) = &p.goal.description {
        s.push_str(&format!("goal description: {d}\n"));
    }
    if !p.context_files.is_empty() {
        s.push_str(&format!("research notes: {}\n", p.context_files.join(", ")));
    }
    if let Some(base) = &p.base {
        s.push_str(&format!("base: {base}\n"));
    }
    s.push_str(&format!(
        "repository map: {} of {} files, {} of {} characters ({} parsed, {} cached){}\n\n",
        p.files.len(),
        p.total_files,
        p.map.chars().count(),
        p.budget_chars,
        p.parsed,
        p.cached,
        if p.map_in_instructions {
            ""
        } else {
            "; not in a FIX task's instruction file"
        }
    ));
    if let Some(b) = &p.baseline {
        s.push_str(&preview_baseline::render(b));
        s.push('\n');
    }
    s.push_str(&p.map);
    s
}
