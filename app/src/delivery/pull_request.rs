//! Delivering a task as a pull request (issue 39): once its branch is pushed, one pull
//! request from `forge/<task-id>` onto the base, its body the report; a draft while the
//! change is held, ready once approved. A repeated delivery updates the pull request it
//! opened (found by head when the answer was lost), never opens a second. A forge that
//! refuses (a 422) or is down leaves the branch pushed and the reason in the report; a
//! later [`Delivery::retry_pull_request`] completes it.

use std::sync::Arc;

use forge_domain::Redactor;
use forge_domain::delivery::AuditAction;
use forge_domain::forges::{PullRequestDelivery, PullRequestInfo, RepoRef, render};
use forge_domain::task::{TaskId, TaskOutcome, TaskStatus};
use forge_ports::Forge;

use super::{Delivery, DeliveryError};

/// Where a repository's pull requests go.
#[derive(Clone)]
pub struct PullRequestTarget {
    pub forge: Arc<dyn Forge>,
    pub repo: RepoRef,
    /// The branch the pull request merges into.
    pub base: String,
    /// Masks the worker's secrets in the title and body.
    pub redactor: Redactor,
    /// The issue the pull request closes (`Closes #N`): a task queued from an issue.
    pub closes: Option<u64>,
    /// A follow-up answers where it was asked once its commit is pushed.
    pub reply: Option<FollowupReply>,
}

/// Where a follow-up's answer goes: the review comment's thread, else the pull request's
/// conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowupReply {
    pub comment_id: Option<u64>,
    /// GitLab's discussion id.
    pub thread: Option<String>,
}

impl Delivery {
    /// The same delivery, delivering as a pull request through `target`: the branch is
    /// always pushed (a pull request needs it on the forge), and a held change is committed
    /// and pushed too, to open as a draft.
    pub fn with_pull_request(mut self, target: PullRequestTarget) -> Self {
        self.settings.push = true;
        self.pull_request = Some(target);
        self
    }

    /// The same delivery, its pull request closing `issue` and answering `reply` (a task
    /// queued from an issue; a follow-up). Unchanged without a pull request.
    pub fn for_feedback(mut self, closes: Option<u64>, reply: Option<FollowupReply>) -> Self {
        if let Some(target) = &mut self.pull_request {
            target.closes = closes.or(target.closes);
            target.reply = reply.or_else(|| target.reply.take());
        }
        self
    }

    /// Whether changes go out as pull requests.
    pub fn delivers_pull_requests(&self) -> bool {
        self.pull_request.is_some()
    }

    /// Opens or updates the task's pull request from `outcome` (whose branch is pushed),
    /// as a draft when `held`; records what happened in `outcome.pull_request` and the audit
    /// log. Never fails the delivery: the forge's refusal is the report's to say.
    pub(super) async fn publish_pull_request(&self, outcome: &mut TaskOutcome, held: bool) {
        let Some(target) = &self.pull_request else {
            return;
        };
        let closes = outcome
            .pull_request
            .as_ref()
            .and_then(|p| p.closes)
            .or(target.closes);
        let known = outcome.pull_request.as_ref().and_then(|p| p.opened.clone());
        let body = render(outcome, held, closes, &target.redactor);
        let result = self
            .open_or_update(target, &outcome.branch, known, &body)
            .await;
        let (entry, delivery) = match result {
            Ok(info) => (
                self.entry(
                    &outcome.task_id,
                    AuditAction::PullRequest,
                    format!(
                        "#{} {}{}",
                        info.number,
                        info.url,
                        if info.draft { " (draft)" } else { "" }
                    ),
                ),
                PullRequestDelivery {
                    opened: Some(info),
                    error: None,
                    closes,
                    feedback: Some(self.words.clone()),
                },
            ),
            Err(e) => {
                let error = target.redactor.redact(&e.to_string()).into_owned();
                (
                    self.entry(&outcome.task_id, AuditAction::PullRequestFailed, &error),
                    PullRequestDelivery {
                        opened: outcome.pull_request.as_ref().and_then(|p| p.opened.clone()),
                        error: Some(error),
                        closes,
                        feedback: Some(self.words.clone()),
                    },
                )
            }
        };
        let number = delivery.opened.as_ref().map(|info| info.number);
        outcome.pull_request = Some(delivery);
        // The audit row is best effort here: the outcome (saved by the caller) holds it all.
        let _ = self.ports.store.append_audit(&entry).await;
        if let (Some(reply), Some(number)) = (&target.reply, number) {
            self.answer(target, reply, number, outcome).await;
        }
    }

    /// Posts the follow-up's answer (commit and validation) where it was asked; a reply
    /// the forge refuses becomes a comment on the pull request. Best effort: the commit is
    /// pushed and the report says it all.
    async fn answer(
        &self,
        target: &PullRequestTarget,
        reply: &FollowupReply,
        number: u64,
        outcome: &TaskOutcome,
    ) {
        let text = target
            .redactor
            .redact(&forge_domain::forges::followup_reply(outcome))
            .into_owned();
        let forge = &target.forge;
        if let Some(comment) = reply.comment_id {
            let replied = forge
                .reply_in_thread(
                    &target.repo,
                    number,
                    comment,
                    reply.thread.as_deref(),
                    &text,
                )
                .await;
            if replied.is_ok() {
                return;
            }
        }
        let _ = forge.comment(&target.repo, number, &text).await;
    }

    async fn open_or_update(
        &self,
        target: &PullRequestTarget,
        head: &str,
        known: Option<PullRequestInfo>,
        body: &forge_domain::forges::PullRequestBody,
    ) -> Result<PullRequestInfo, forge_domain::ForgeError> {
        let forge = &target.forge;
        let existing = match known {
            Some(info) => Some(info),
            // An earlier attempt may have opened it and lost the answer.
            None => forge.find_pull_request(&target.repo, head).await?,
        };
        let Some(info) = existing else {
            return forge
                .open_pull_request(&target.repo, head, &target.base, body)
                .await;
        };
        let mut info = forge
            .update_pull_request(&target.repo, info.number, body)
            .await
            .map(|updated| PullRequestInfo {
                draft: info.draft,
                ..updated
            })?;
        if info.draft != body.draft {
            forge
                .set_draft(&target.repo, info.number, body.draft)
                .await?;
            info.draft = body.draft;
        }
        Ok(info)
    }

    /// Opens or updates task `id`'s pull request again (after a 422 or a forge that was
    /// down); the outcome as stored afterwards.
    ///
    /// # Errors
    /// [`DeliveryError::WrongState`] when the task is not delivered as a pushed branch or
    /// pull requests are not configured; [`DeliveryError::Forge`] when the store fails.
    pub async fn retry_pull_request(&self, id: &TaskId) -> Result<TaskOutcome, DeliveryError> {
        let (_, mut outcome) = self.load(id).await?;
        let pushed = outcome.delivery.as_ref().is_some_and(|d| d.pushed);
        if self.pull_request.is_none() || !pushed {
            return Err(DeliveryError::WrongState {
                task: id.clone(),
                status: outcome.status,
                reason: if self.pull_request.is_none() {
                    "pull requests are not configured for its repository".to_owned()
                } else {
                    "its branch is not pushed, so no pull request can be opened".to_owned()
                },
            });
        }
        let held = outcome.status == TaskStatus::PendingApproval;
        self.publish_pull_request(&mut outcome, held).await;
        self.save(&outcome, &[]).await?;
        Ok(outcome)
    }
}
