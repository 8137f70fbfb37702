//! Submitting a task to the queue, one set of rules for `task submit` and `POST /v1/tasks`:
//! the options of `task run` a queued task travels with (recorded at submit, turned back
//! into `task run` arguments by the worker that claims it) and what a submission must hold.
//! Context files travel by content: the worker's machine may not have the submitter's files.

use forge_domain::queue::{DEFAULT_MAX_ATTEMPTS, QueueSubmission};
use forge_domain::task::TaskId;
use serde::{Deserialize, Serialize};

/// One `--context-file`: its name and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFile {
    pub name: String,
    pub text: String,
}

/// The options of `task run` a queued task carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default)]
    pub push: bool,
    /// Deliver as a pull request (`--pull-request`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pull_request: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<ContextFile>,
    /// A follow-up of a task's pull request (issue 39): the parent whose branch and agent
    /// session it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub followup: Option<FollowupOf>,
    /// The issue the task's pull request closes (`Closes #N`): a task queued from an issue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<u64>,
}

/// What a follow-up continues: the parent task's branch (base and head at once, so the new
/// commit is a fast-forward of the pull request), its agent session, and where to answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FollowupOf {
    pub parent: TaskId,
    /// `forge/<parent>`: the pull request's head.
    pub branch: String,
    /// The pull request's number; `None`: a follow-up asked by hand of a task delivered
    /// without one (`task submit --follow-up`), or whose pull request is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// The parent's agent session, resumed by the worker where the CLI can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The provider that owns `session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The review comment to reply to in its thread; `None`: a comment on the pull request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<u64>,
    /// GitLab's discussion id of `reply_to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
}

/// Why a submission is refused; the message names the field as the API spells it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitRefusal {
    #[error("repo: the repository URL is empty")]
    EmptyRepo,
    #[error("prompt: the task is empty")]
    EmptyPrompt,
    #[error("max_attempts: {0} is not in 1..=100")]
    MaxAttempts(u32),
    #[error("options: {0}")]
    Options(String),
}

/// The submission of task `task_id`, or why it is refused. `max_attempts` absent: the
/// queue's default.
///
/// # Errors
/// [`SubmitRefusal`] for an empty repository or prompt, attempts outside 1..=100, options
/// that cannot be recorded.
pub fn submission(
    task_id: TaskId,
    repo: String,
    prompt: String,
    options: &TaskOptions,
    max_attempts: Option<u32>,
) -> Result<QueueSubmission, SubmitRefusal> {
    if repo.trim().is_empty() {
        return Err(SubmitRefusal::EmptyRepo);
    }
    if prompt.trim().is_empty() {
        return Err(SubmitRefusal::EmptyPrompt);
    }
    let max_attempts = max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    if !(1..=100).contains(&max_attempts) {
        return Err(SubmitRefusal::MaxAttempts(max_attempts));
    }
    let options =
        serde_json::to_value(options).map_err(|e| SubmitRefusal::Options(e.to_string()))?;
    Ok(QueueSubmission {
        task_id,
        repo,
        prompt,
        options,
        max_attempts,
    })
}

/// A queued approval as the API and `--json` show it: with its state as a person reads it
/// (`status`, e.g. `approved (waiting for worker w1)`).
pub fn approval_json(a: &forge_domain::queue_approval::QueueApproval) -> serde_json::Value {
    let mut value = serde_json::to_value(a).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("status".to_owned(), a.status_text().into());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_options_from_a_newer_forge_are_refused() {
        let err = serde_json::from_value::<TaskOptions>(serde_json::json!({"teleport": true}));
        assert!(err.is_err());
        let empty = serde_json::from_value::<TaskOptions>(serde_json::json!({}));
        assert_eq!(empty.ok(), Some(TaskOptions::default()));
    }
}
