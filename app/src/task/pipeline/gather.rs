//! Stage `context`, gathered in parallel (one `join`): the repository map ranked by the
//! task (not for FIX; the tree listing when the map cannot be made), the baseline validation on the untouched work tree, the goal and the research
//! notes. Each part is timed for the plan.

use forge_domain::task::{TaskType, ValidationReport};

use forge_domain::task::repomap::RepoMap;

use super::super::context::{self, ContextPart, INDEX_CAP, INDEX_LIMIT};
use super::super::request::Stage;
use super::super::rules;
use super::task::{Checks, Reporter, Stopped, Task};

/// What the context stage gives the later stages.
pub(super) struct Gathered {
    /// The repository map ranked by the task (`None` for FIX, or when the walk failed).
    pub map: Option<RepoMap>,
    /// Validation on the untouched work tree.
    pub baseline: ValidationReport,
    /// How long each part took, for `plan.json`.
    pub parts: Vec<ContextPart>,
}

/// Gathers the context.
///
/// # Errors
/// A [`Stopped`] when the baseline could not run or was cancelled.
pub(super) async fn gather(
    task: &Task<'_>,
    checks: &Checks,
    task_type: TaskType,
    report: &mut Reporter,
) -> Result<Gathered, Stopped> {
    report.stage(Stage::Context, 0.0, "map, baseline, goal, research");
    let clock = task.pipeline.agent.runtime().clock.clone();
    let index_part = async {
        let t = clock.monotonic_ms();
        if task_type == TaskType::Fix {
            return (None, part("map", 0, 0, Some("omitted for FIX".into())));
        }
        let ports = &task.pipeline.ports;
        let repo = std::path::Path::new(&task.req.repo);
        match context::repository_map(ports.mapper.as_ref(), &task.worktree, repo, &task.req.spec)
            .await
        {
            Ok(made) => {
                let note = format!(
                    "{} of {} files shown; {} parsed, {} cached",
                    made.map.files.len(),
                    made.map.total_files,
                    made.parsed,
                    made.cached
                );
                let p = part(
                    "map",
                    clock.monotonic_ms() - t,
                    made.map.text.len(),
                    Some(note),
                );
                (Some(made.map), p)
            }
            // The map could not be made: the plain tree listing, saying why.
            Err(e) => match ports.index.index(&task.worktree, INDEX_LIMIT).await {
                Ok(entries) => {
                    let summary = rules::index_summary(&entries, INDEX_CAP);
                    let note = format!("repository map failed ({e}); tree listing instead");
                    let p = part("map", clock.monotonic_ms() - t, summary.len(), Some(note));
                    (Some(tree_listing(summary)), p)
                }
                Err(e2) => (
                    None,
                    part(
                        "map",
                        clock.monotonic_ms() - t,
                        0,
                        Some(format!("{e}; {e2}")),
                    ),
                ),
            },
        }
    };
    let baseline_part = async {
        let t = clock.monotonic_ms();
        let result = checks.run(&task.worktree, "baseline", &task.cancel).await;
        let note = match &result {
            Ok(r) if r.passed => None,
            Ok(_) => Some("already failing before the task".to_owned()),
            Err(e) => Some(e.to_string()),
        };
        let p = part("baseline", clock.monotonic_ms() - t, 0, note);
        (result, p)
    };
    let goal_part = async {
        let goal = &task.req.spec.goal;
        let chars = goal.title.as_deref().map_or(0, str::len)
            + goal.description.as_deref().map_or(0, str::len);
        part("goal", 0, chars, None)
    };
    let research_part = async {
        let chars = task
            .req
            .spec
            .context_files
            .iter()
            .map(|f| f.text.len())
            .sum();
        part("research", 0, chars, None)
    };
    let ((map, index_p), (baseline, baseline_p), goal_p, research_p) =
        tokio::join!(index_part, baseline_part, goal_part, research_part);
    Ok(Gathered {
        map,
        baseline: baseline?,
        parts: vec![index_p, baseline_p, goal_p, research_p],
    })
}

/// The tree listing in the map's place (no ranked files).
fn tree_listing(text: String) -> RepoMap {
    RepoMap {
        text,
        files: Vec::new(),
        budget_chars: INDEX_CAP,
        total_files: 0,
    }
}

fn part(name: &'static str, duration_ms: u64, chars: usize, note: Option<String>) -> ContextPart {
    ContextPart {
        name,
        duration_ms,
        chars,
        note,
    }
}
