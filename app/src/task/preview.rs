//! `task context`: what an agent would be given as context for a task — the task type, the
//! goal, the research notes and the repository map exactly as the instruction file would
//! hold it — without running an agent or changing the repository. With a base ref the map
//! is made from a scratch detached work tree at that commit, removed afterwards.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::{Goal, TaskSpec, TaskType};
use serde::Serialize;

use super::context::{self, MadeMap};
use super::pipeline::TaskPorts;
use super::rules;

/// The context of a task, as `task context --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextPreview {
    /// The map, exactly as the instruction file holds it.
    pub map: String,
    /// The files shown, most relevant first.
    pub files: Vec<String>,
    pub budget_chars: usize,
    pub total_files: usize,
    /// Files parsed this time; the rest came from the cache.
    pub parsed: usize,
    pub cached: usize,
    pub task: String,
    pub task_type: TaskType,
    /// FIX tasks get no map in their instruction file (they stay on the failure).
    pub map_in_instructions: bool,
    pub goal: Goal,
    /// The research notes' names (`--context-file`).
    pub context_files: Vec<String>,
    /// The commit mapped (`None`: the repository's work tree as it is).
    pub base: Option<String>,
}

/// The context of `spec`'s task in the repository at `repo`. With `spec.base`, the
/// commit it names is checked out detached at `scratch` (which must not exist) and
/// removed again, whatever happens.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when `repo` is not a git repository or the base names no
/// commit; [`ForgeError::Io`] when git or the walk fails.
pub async fn preview(
    ports: &TaskPorts,
    repo: &Path,
    spec: &TaskSpec,
    scratch: &Path,
) -> Result<ContextPreview, ForgeError> {
    if !ports.vcs.is_repository(repo).await? {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{} is not a git repository", repo.display()),
        });
    }
    let (made, base) = match spec.base.as_deref() {
        None => (
            context::repository_map(ports.mapper.as_ref(), repo, repo, spec).await?,
            None,
        ),
        Some(rev) => {
            let commit = ports.vcs.resolve_commit(repo, rev).await?.ok_or_else(|| {
                ForgeError::InvalidRequest {
                    reason: format!("--base {rev}: no such commit in {}", repo.display()),
                }
            })?;
            ports
                .vcs
                .add_detached_worktree(repo, scratch, &commit)
                .await?;
            let made = context::repository_map(ports.mapper.as_ref(), scratch, repo, spec).await;
            let removed = ports.vcs.remove_worktree(repo, scratch).await;
            let made: MadeMap = made?;
            removed?;
            (made, Some(commit))
        }
    };
    let task_type = rules::classify(&spec.task, spec.task_type);
    Ok(ContextPreview {
        map: made.map.text,
        files: made.map.files,
        budget_chars: made.map.budget_chars,
        total_files: made.map.total_files,
        parsed: made.parsed,
        cached: made.cached,
        task: spec.task.clone(),
        task_type,
        map_in_instructions: task_type != TaskType::Fix,
        goal: spec.goal.clone(),
        context_files: spec.context_files.iter().map(|f| f.name.clone()).collect(),
        base,
    })
}
