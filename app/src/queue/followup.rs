//! A follow-up asked by hand (issue 39): `task submit --follow-up TASK_ID "more work"` and
//! `POST /v1/tasks/{id}/followups`. It continues the task's branch (a fast-forward: the
//! branch is base and head), resumes its agent session — on whichever worker takes it, the
//! session travelling through the queue's store — and delivers as the task did (the same
//! pull request when it has one).

use forge_domain::queue::{QueueState, QueuedTask};
use serde_json::Value;

use super::submit::{FollowupOf, TaskOptions};
use crate::forges::known::{options_of, session_of};

/// Why a task cannot be followed up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FollowupRefusal {
    #[error("task {0} has not succeeded (it is {1}): there is nothing to follow up yet")]
    NotSucceeded(String, &'static str),
    #[error(
        "task {0} delivered no commit: there is no branch to continue (a task with no \
         change, or one still held for approval)"
    )]
    NoCommit(String),
    #[error(
        "task {0}'s branch was not pushed, so no other worker can continue it: follow up \
         tasks submitted with --push or --pull-request"
    )]
    NotPushed(String),
}

/// The repository and options of a follow-up of `task` (see the module docs).
///
/// # Errors
/// A [`FollowupRefusal`] when `task` has not succeeded, delivered no commit, or its branch
/// is not on the remote.
pub fn followup_options(task: &QueuedTask) -> Result<(String, TaskOptions), FollowupRefusal> {
    let id = task.task_id.to_string();
    if task.state != QueueState::Succeeded {
        return Err(FollowupRefusal::NotSucceeded(id, task.state.as_str()));
    }
    let report = task.report.clone().unwrap_or_default();
    if report
        .pointer("/delivery/commit")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err(FollowupRefusal::NoCommit(id));
    }
    let options = options_of(task);
    if !(options.push || options.pull_request || options.followup.is_some()) {
        return Err(FollowupRefusal::NotPushed(id));
    }
    // A follow-up of a follow-up continues the same family: its root, its branch.
    let (root, branch, number) = match &options.followup {
        Some(of) => (of.parent.clone(), of.branch.clone(), of.number),
        None => (task.task_id.clone(), task.task_id.branch(), None),
    };
    let number = number.or_else(|| {
        report
            .pointer("/pull_request/number")
            .and_then(Value::as_u64)
    });
    let session = session_of(&report);
    let followup = FollowupOf {
        parent: root,
        branch: branch.clone(),
        number,
        session: session.as_ref().map(|(s, _)| s.clone()),
        provider: session.as_ref().map(|(_, p)| p.clone()),
        reply_to: None,
        thread: None,
    };
    let options = TaskOptions {
        // The session's own provider resumes it.
        provider: followup.provider.clone().or(options.provider.clone()),
        base: Some(branch),
        push: true,
        followup: Some(followup),
        closes: None,
        context_files: Vec::new(),
        ..options
    };
    Ok((task.repo.clone(), options))
}

#[cfg(test)]
mod tests {
    use forge_domain::task::TaskId;
    use serde_json::json;

    use super::*;

    fn task(id: &str, state: QueueState, options: Value, report: Option<Value>) -> QueuedTask {
        let mut t = forge_testkit_task(id);
        t.state = state;
        t.options = options;
        t.report = report;
        t
    }

    fn forge_testkit_task(id: &str) -> QueuedTask {
        QueuedTask {
            task_id: TaskId::new(id).unwrap_or_else(|e| panic!("{e}")),
            state: QueueState::Queued,
            repo: "https://git.example/r.git".into(),
            prompt: "Write 41".into(),
            options: json!({}),
            attempts: 1,
            max_attempts: 3,
            worker: None,
            lease_until_ms: None,
            cancel_requested: false,
            submitted_at_ms: 1,
            started_at_ms: None,
            finished_at_ms: None,
            exit_code: Some(0),
            last_error: None,
            report: None,
        }
    }

    fn delivered(session: &str) -> Value {
        json!({"provider": "codex", "delivery": {"commit": "abc"},
               "cycles": [{"session_id": session}]})
    }

    #[test]
    fn a_follow_up_continues_the_branch_and_the_session() {
        let parent = task(
            "q-1",
            QueueState::Succeeded,
            json!({"push": true, "provider": "claude"}),
            Some(delivered("s-1")),
        );
        let (repo, options) = followup_options(&parent).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(repo, "https://git.example/r.git");
        assert_eq!(options.base.as_deref(), Some("forge/q-1"));
        assert_eq!(options.provider.as_deref(), Some("codex"));
        let of = options.followup.unwrap_or_else(|| panic!("no followup"));
        assert_eq!(
            (of.parent.as_str(), of.branch.as_str()),
            ("q-1", "forge/q-1")
        );
        assert_eq!((of.session.as_deref(), of.number), (Some("s-1"), None));
    }

    #[test]
    fn a_follow_up_of_a_follow_up_stays_in_the_family() {
        let options = json!({"push": true, "followup": {"parent": "q-1",
            "branch": "forge/q-1", "number": 7, "session": "s-1"}});
        let second = task(
            "q-2",
            QueueState::Succeeded,
            options,
            Some(delivered("s-1")),
        );
        let (_, options) = followup_options(&second).unwrap_or_else(|e| panic!("{e}"));
        let of = options.followup.unwrap_or_else(|| panic!("no followup"));
        assert_eq!(
            (of.parent.as_str(), of.branch.as_str(), of.number),
            ("q-1", "forge/q-1", Some(7))
        );
    }

    #[test]
    fn tasks_without_a_pushed_commit_are_refused() {
        let check = |t: QueuedTask, expected: FollowupRefusal| {
            assert_eq!(followup_options(&t).err(), Some(expected));
        };
        check(
            task("q-1", QueueState::Running, json!({"push": true}), None),
            FollowupRefusal::NotSucceeded("q-1".into(), "running"),
        );
        check(
            task(
                "q-1",
                QueueState::Succeeded,
                json!({"push": true}),
                Some(json!({"delivery": {"approval_id": "ap-1"}})),
            ),
            FollowupRefusal::NoCommit("q-1".into()),
        );
        check(
            task(
                "q-1",
                QueueState::Succeeded,
                json!({}),
                Some(delivered("s-1")),
            ),
            FollowupRefusal::NotPushed("q-1".into()),
        );
    }
}
