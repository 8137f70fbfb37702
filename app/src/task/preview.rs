//! `task context`: what an agent would be given as context for a task — the task type, the
//! goal, the research notes and the repository map exactly as the instruction file would
//! hold it — without running an agent or changing the repository. With a base ref the map
//! is made from a scratch detached work tree at that commit, removed afterwards; with the
//! baseline the validation steps run there too ([`preview_baseline`]).

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::{Goal, TaskSpec, TaskType};
use serde::Serialize;

use super::context::{self, MadeMap};
use super::pipeline::TaskPorts;
use super::preview_baseline::{self, BaselineInputs, PreviewBaseline};
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
    /// The validation steps run at the base (`--baseline`; `None`: not asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<PreviewBaseline>,
}

/// The context of `spec`'s task in the repository at `repo`. With `spec.base` or
/// `baseline`, the base commit (`HEAD` without `spec.base`) is checked out detached at
/// `scratch` (which must not exist) and removed again, whatever happens: the map is made
/// there when `spec.base` is set, the baseline's validation steps run there.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when `repo` is not a git repository, the base names no
/// commit, or `baseline` is asked for and the project has no validation step;
/// [`ForgeError::ExecutableNotFound`] when a validation step's program is missing;
/// [`ForgeError::Io`] when git, the walk or a step's shell fails;
/// [`ForgeError::Cancelled`] when the baseline was cancelled.
pub async fn preview(
    ports: &TaskPorts,
    repo: &Path,
    spec: &TaskSpec,
    scratch: &Path,
    baseline: Option<&BaselineInputs>,
) -> Result<ContextPreview, ForgeError> {
    if !ports.vcs.is_repository(repo).await? {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{} is not a git repository", repo.display()),
        });
    }
    if spec.base.is_none() && baseline.is_none() {
        let made = context::repository_map(ports.mapper.as_ref(), repo, repo, spec).await?;
        return Ok(shown(spec, made, None, None));
    }
    let commit = base_commit(ports, repo, spec.base.as_deref()).await?;
    ports
        .vcs
        .add_detached_worktree(repo, scratch, &commit)
        .await?;
    let in_scratch = async {
        // The map first: the baseline's build writes into the scratch work tree.
        let map_root = if spec.base.is_some() { scratch } else { repo };
        let made = context::repository_map(ports.mapper.as_ref(), map_root, repo, spec).await?;
        let checked = match baseline {
            Some(inputs) => Some(
                preview_baseline::run_in(ports.files.as_ref(), inputs, scratch, commit.clone())
                    .await?,
            ),
            None => None,
        };
        Ok::<_, ForgeError>((made, checked))
    }
    .await;
    let removed = ports.vcs.remove_worktree(repo, scratch).await;
    let (made, checked) = in_scratch?;
    removed?;
    let base = spec.base.is_some().then_some(commit);
    Ok(shown(spec, made, base, checked))
}

/// The commit `base` names (`HEAD` when `None`).
async fn base_commit(
    ports: &TaskPorts,
    repo: &Path,
    base: Option<&str>,
) -> Result<String, ForgeError> {
    let rev = base.unwrap_or("HEAD");
    ports
        .vcs
        .resolve_commit(repo, rev)
        .await?
        .ok_or_else(|| ForgeError::InvalidRequest {
            reason: match base {
                Some(rev) => format!("--base {rev}: no such commit in {}", repo.display()),
                None => format!(
                    "--baseline: {} has no commit to validate yet",
                    repo.display()
                ),
            },
        })
}

fn shown(
    spec: &TaskSpec,
    made: MadeMap,
    base: Option<String>,
    baseline: Option<PreviewBaseline>,
) -> ContextPreview {
    let task_type = rules::classify(&spec.task, spec.task_type);
    ContextPreview {
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
        baseline,
    }
}
