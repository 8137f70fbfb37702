//! Stage 4: the context, gathered in parallel (one `join`): the repository map ranked by
//! the task (not for FIX), the baseline validation on the untouched work tree, the goal and
//! the research notes. Each part is timed for the plan.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::TaskSpec;
use forge_domain::task::repomap::{self, RepoMap};
use forge_ports::RepoMapper;
use serde::Serialize;

/// The tree listing's size cap (characters), when the map cannot be made.
pub const INDEX_CAP: usize = 3000;
/// Entries read from the walk at most (the summary shows far fewer).
pub const INDEX_LIMIT: usize = 20_000;
/// Files the map reads at most.
pub const MAP_LIMIT: usize = 20_000;
/// Files of the map the task report records.
pub const REPORT_FILES: usize = 10;

/// The text the map is ranked by: the task, and what the user expects back.
pub fn task_text(spec: &TaskSpec) -> String {
    match spec.expected.as_deref().filter(|e| !e.trim().is_empty()) {
        Some(expected) => format!("{}\n{expected}", spec.task),
        None => spec.task.clone(),
    }
}

/// The map's budget: `[task] context_chars`, else the default.
pub fn budget(spec: &TaskSpec) -> usize {
    spec.context_chars.unwrap_or(repomap::DEFAULT_CONTEXT_CHARS)
}

/// A map and how it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MadeMap {
    #[serde(flatten)]
    pub map: RepoMap,
    /// Files parsed this time and taken from the cache.
    pub parsed: usize,
    pub cached: usize,
}

/// The repository map of the work tree `root` (of repository `repo`, the cache's key) for
/// `spec`'s task.
///
/// # Errors
/// [`ForgeError::Io`] when the work tree cannot be read.
pub async fn repository_map(
    mapper: &dyn RepoMapper,
    root: &Path,
    repo: &Path,
    spec: &TaskSpec,
) -> Result<MadeMap, ForgeError> {
    let tags = mapper.tags(root, repo, MAP_LIMIT).await?;
    let map = repomap::build(&tags.files, &task_text(spec), budget(spec));
    Ok(MadeMap {
        map,
        parsed: tags.parsed,
        cached: tags.cached,
    })
}

/// The map ranked by a validation `failure` for the correction prompt (smaller budget:
/// [`repomap::failure::FAILURE_MAP_CHARS`]), or `None` when the failure names nothing of
/// the repository or the work tree cannot be read (the prompt goes without it). Only the
/// files the agent changed are parsed again: the rest come from the cache.
pub async fn failure_map(
    mapper: &dyn RepoMapper,
    root: &Path,
    repo: &Path,
    failure: &str,
) -> Option<RepoMap> {
    if failure.trim().is_empty() {
        return None;
    }
    let tags = mapper.tags(root, repo, MAP_LIMIT).await.ok()?;
    repomap::failure::failure_map(&tags.files, failure, repomap::failure::FAILURE_MAP_CHARS)
}

/// How long one context part took and how big it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextPart {
    pub name: &'static str,
    pub duration_ms: u64,
    pub chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
