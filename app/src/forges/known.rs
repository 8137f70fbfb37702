//! forge's pull requests as the queue knows them: a task's report holds the pull request it
//! opened and the commit it pushed; its follow-ups (tasks whose options name it as
//! `followup.parent`) push further commits onto the same branch. One family per pull
//! request: the parent, its follow-ups, the latest commit and agent session among them.

use forge_domain::forges::{
    FeedbackWords, KnownPullRequest, PullRequestInfo, PullRequestState, RepoRef,
};
use forge_domain::queue::QueuedTask;
use forge_domain::task::TaskId;
use serde_json::Value;

use crate::queue::TaskOptions;

/// One pull request forge opened and what became of it since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestFamily {
    pub known: KnownPullRequest,
    pub repo: RepoRef,
    /// The parent's repository URL (where a follow-up is cloned from).
    pub repo_url: String,
    /// Every commit pushed onto the branch (the parent's first).
    pub commits: Vec<String>,
    /// The follow-ups submitted so far, oldest first.
    pub followups: Vec<TaskId>,
    /// The latest agent session among the family's reports, and its provider.
    pub session: Option<(String, String)>,
    /// The approval the parent's held change waits for.
    pub approval_id: Option<String>,
    /// The parent's options (provider, model, permission mode …), which follow-ups keep.
    pub options: TaskOptions,
}

/// The options a queued task was submitted with (empty when they cannot be read).
pub fn options_of(task: &QueuedTask) -> TaskOptions {
    serde_json::from_value(task.options.clone()).unwrap_or_default()
}

/// The pull-request families among `tasks` (as `TaskQueue::tasks` lists them).
pub fn families(tasks: &[QueuedTask]) -> Vec<PullRequestFamily> {
    let mut sorted: Vec<&QueuedTask> = tasks.iter().collect();
    sorted.sort_by_key(|t| t.submitted_at_ms);
    let mut out: Vec<PullRequestFamily> = Vec::new();
    for task in &sorted {
        if options_of(task).followup.is_some() {
            continue;
        }
        let Some(report) = &task.report else { continue };
        let Some(info) = report
            .get("pull_request")
            .and_then(|p| serde_json::from_value::<PullRequestInfo>(p.clone()).ok())
        else {
            continue;
        };
        let Some(repo) = RepoRef::parse(&task.repo) else {
            continue;
        };
        let commit = text(report, "/delivery/commit");
        out.push(PullRequestFamily {
            known: KnownPullRequest {
                task_id: task.task_id.clone(),
                info,
                head_sha: commit.clone().unwrap_or_default(),
            },
            repo,
            repo_url: task.repo.clone(),
            commits: commit.into_iter().collect(),
            followups: Vec::new(),
            session: session_of(report),
            approval_id: text(report, "/delivery/approval_id"),
            options: options_of(task),
        });
    }
    for task in &sorted {
        let Some(of) = options_of(task).followup else {
            continue;
        };
        let Some(family) = out.iter_mut().find(|f| f.known.task_id == of.parent) else {
            continue;
        };
        family.followups.push(task.task_id.clone());
        let Some(report) = &task.report else { continue };
        if let Some(commit) = text(report, "/delivery/commit") {
            family.known.head_sha.clone_from(&commit);
            family.commits.push(commit);
        }
        if let Some(session) = session_of(report) {
            family.session = Some(session);
        }
    }
    out
}

/// The family of pull request `number` on `repo`.
pub fn by_number<'a>(
    families: &'a [PullRequestFamily],
    repo: &RepoRef,
    number: u64,
) -> Option<&'a PullRequestFamily> {
    families
        .iter()
        .find(|f| &f.repo == repo && f.known.info.number == number)
}

/// The family a check ran for: one of `numbers`, else the one that pushed `sha`.
pub fn by_check<'a>(
    families: &'a [PullRequestFamily],
    repo: &RepoRef,
    numbers: &[u64],
    sha: &str,
) -> Option<&'a PullRequestFamily> {
    numbers
        .iter()
        .find_map(|n| by_number(families, repo, *n))
        .or_else(|| {
            families
                .iter()
                .find(|f| &f.repo == repo && f.commits.iter().any(|c| c.eq_ignore_ascii_case(sha)))
        })
}

/// How `repo`'s team steers forge (`[delivery] mention` / `issue_label`), as the newest of
/// its delivered pull requests recorded it; `None` when none did.
pub fn words(tasks: &[QueuedTask], repo: &RepoRef) -> Option<FeedbackWords> {
    tasks
        .iter()
        .filter(|t| RepoRef::parse(&t.repo).as_ref() == Some(repo))
        .filter_map(|t| {
            let recorded = t.report.as_ref()?.pointer("/pull_request/feedback")?;
            let words = serde_json::from_value::<FeedbackWords>(recorded.clone()).ok()?;
            Some((t.submitted_at_ms, words))
        })
        .max_by_key(|(at, _)| *at)
        .map(|(_, words)| words)
}

/// Marks the family's pull request closed (a person closed it: no more follow-ups).
pub fn closed(mut family: PullRequestFamily) -> PullRequestFamily {
    family.known.info.state = PullRequestState::Closed;
    family
}

fn text(report: &Value, pointer: &str) -> Option<String> {
    report
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The last cycle's session and the report's provider.
pub(crate) fn session_of(report: &Value) -> Option<(String, String)> {
    let provider = text(report, "/provider")?;
    let session = report
        .get("cycles")?
        .as_array()?
        .iter()
        .rev()
        .find_map(|c| c.get("session_id").and_then(Value::as_str))?;
    Some((session.to_owned(), provider))
}

#[cfg(test)]
mod tests {
    use forge_domain::queue::QueueState;
    use serde_json::json;

    use super::*;

    fn task(id: &str, at: u64, options: Value, report: Option<Value>) -> QueuedTask {
        QueuedTask {
            task_id: TaskId::new(id).unwrap_or_else(|e| panic!("{e}")),
            state: QueueState::Succeeded,
            repo: "https://github.com/o/r.git".into(),
            prompt: "p".into(),
            options,
            attempts: 1,
            max_attempts: 3,
            worker: None,
            lease_until_ms: None,
            cancel_requested: false,
            submitted_at_ms: at,
            started_at_ms: None,
            finished_at_ms: None,
            exit_code: Some(0),
            last_error: None,
            report,
        }
    }

    #[test]
    fn a_family_is_the_parent_and_its_followups() {
        let pr = json!({"url": "https://github.com/o/r/pull/7", "number": 7,
            "state": "open", "draft": true});
        let tasks = vec![
            task(
                "q-2",
                2,
                json!({"followup": {"parent": "q-1", "branch": "forge/q-1", "number": 7}}),
                Some(json!({"provider": "codex", "delivery": {"commit": "bbb"},
                    "cycles": [{"session_id": "s-2"}]})),
            ),
            task(
                "q-1",
                1,
                json!({}),
                Some(json!({"provider": "claude", "pull_request": pr,
                    "delivery": {"commit": "aaa", "approval_id": "a-1"},
                    "cycles": [{"session_id": "s-1"}, {}]})),
            ),
            task("q-3", 3, json!({}), Some(json!({"provider": "claude"}))),
        ];
        let all = families(&tasks);
        assert_eq!(all.len(), 1);
        let f = &all[0];
        assert_eq!(f.known.task_id.as_str(), "q-1");
        assert_eq!(f.known.head_sha, "bbb");
        assert!(f.known.info.draft);
        assert_eq!(f.commits, ["aaa", "bbb"]);
        assert_eq!(f.followups.len(), 1);
        assert_eq!(f.session, Some(("s-2".into(), "codex".into())));
        assert_eq!(f.approval_id.as_deref(), Some("a-1"));
        let repo = RepoRef::parse("https://github.com/o/r").unwrap_or_else(|| panic!());
        assert!(by_number(&all, &repo, 7).is_some());
        assert!(by_number(&all, &repo, 8).is_none());
        assert!(by_check(&all, &repo, &[], "AAA").is_some());
        assert!(by_check(&all, &repo, &[], "ccc").is_none());
        assert_eq!(closed(f.clone()).known.info.state, PullRequestState::Closed);
    }

    #[test]
    fn the_repositorys_words_are_its_newest_recorded_ones() {
        let pr = |mention: &str| {
            json!({"pull_request": {"number": 1, "feedback":
                {"mention": mention, "issue_label": format!("{mention}-label")}}})
        };
        let mut elsewhere = task("q-9", 9, json!({}), Some(pr("other")));
        elsewhere.repo = "https://github.com/o/another.git".into();
        let repo = RepoRef::parse("https://github.com/o/r").unwrap_or_else(|| panic!());
        let check = |tasks: Vec<QueuedTask>, want: Option<&str>| {
            let got = words(&tasks, &repo);
            assert_eq!(got.as_ref().map(|w| w.mention.as_str()), want, "{tasks:?}");
            if let (Some(w), Some(m)) = (got, want) {
                assert_eq!(w.issue_label, format!("{m}-label"));
            }
        };
        check(vec![], None);
        // A report without recorded words, and another repository's: none.
        check(
            vec![
                task(
                    "q-1",
                    1,
                    json!({}),
                    Some(json!({"pull_request": {"number": 1}})),
                ),
                task("q-2", 2, json!({}), None),
                elsewhere.clone(),
            ],
            None,
        );
        // The newest recorded, whatever the order listed.
        check(
            vec![
                task("q-3", 3, json!({}), Some(pr("newer"))),
                task("q-1", 1, json!({}), Some(pr("older"))),
                elsewhere,
            ],
            Some("newer"),
        );
    }
}
