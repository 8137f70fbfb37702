//! What forge does for a trigger a writer asked for: a follow-up task on the pull request's
//! branch that resumes its agent session (within the follow-up budget), a held change
//! approved and marked ready, a task queued from an issue.

use forge_domain::ForgeError;
use forge_domain::delivery::Decision;
use forge_domain::forges::{
    CheckRunOutput, FollowupBudget, FollowupCause, RepoRef, Review, ReviewState, check_prompt,
    comment_prompt, followup_budget, review_prompt,
};
use forge_domain::queue_approval::QueueDecision;

use super::feedback::{FeedbackOutcome, ForgeEndpoint, ForgeFeedback};
use super::known::PullRequestFamily;
use crate::queue::{FollowupOf, TaskOptions, submission};

/// The marker source of a pull request whose follow-up budget was announced spent.
const EXHAUSTED: &str = "followups-exhausted";

impl ForgeFeedback {
    /// Queues a follow-up of `family`'s task for `cause`, or says the budget is spent.
    pub(super) async fn follow_up(
        &self,
        endpoint: &ForgeEndpoint,
        family: &PullRequestFamily,
        cause: &FollowupCause,
        actor: Option<&str>,
    ) -> Result<FeedbackOutcome, ForgeError> {
        let parent = family.known.task_id.clone();
        let number = family.known.info.number;
        let said = self
            .deliveries
            .delivery_seen(EXHAUSTED, parent.as_str())
            .await?;
        let done = u32::try_from(family.followups.len()).unwrap_or(u32::MAX);
        match followup_budget(done, self.settings.max_followups, said) {
            FollowupBudget::Exhausted => {
                return Ok(FeedbackOutcome::FollowupsExhausted {
                    parent,
                    said: false,
                });
            }
            FollowupBudget::ExhaustedSayOnce => {
                let first = self
                    .deliveries
                    .first_delivery(EXHAUSTED, parent.as_str())
                    .await?;
                if first {
                    let text = format!(
                        "forge made {done} follow-ups on this pull request, its limit \
                         (`[task] max_followups` = {}); it makes no more. Push the change \
                         yourself or raise the limit.",
                        self.settings.max_followups
                    );
                    endpoint.forge.comment(&family.repo, number, &text).await?;
                }
                return Ok(FeedbackOutcome::FollowupsExhausted {
                    parent,
                    said: first,
                });
            }
            FollowupBudget::Run { .. } => {}
        }
        let prompt = self
            .followup_prompt(endpoint, &family.repo, number, cause, actor)
            .await;
        let (reply_to, thread) = match cause {
            FollowupCause::Comment {
                inline: Some(c), ..
            } => (Some(c.id), c.thread.clone()),
            _ => (None, None),
        };
        let branch = parent.branch();
        let options = TaskOptions {
            base: Some(branch.clone()),
            push: true,
            followup: Some(FollowupOf {
                parent: parent.clone(),
                branch,
                number: Some(number),
                session: family.session.as_ref().map(|(s, _)| s.clone()),
                provider: family.session.as_ref().map(|(_, p)| p.clone()),
                reply_to,
                thread,
            }),
            // The session's own provider resumes it.
            provider: family
                .session
                .as_ref()
                .map(|(_, p)| p.clone())
                .or_else(|| family.options.provider.clone()),
            closes: None,
            context_files: Vec::new(),
            ..family.options.clone()
        };
        let task_id = self.new_task_id()?;
        let sub = submission(
            task_id.clone(),
            family.repo_url.clone(),
            prompt,
            &options,
            None,
        )
        .map_err(|e| ForgeError::InvalidRequest {
            reason: e.to_string(),
        })?;
        self.queue.submit(&sub).await?;
        Ok(FeedbackOutcome::FollowUpQueued { task_id, parent })
    }

    /// The prompt for `cause`: the comment with its place and thread, the review's comments
    /// together, or the check's output. What cannot be read back is left out (the comment
    /// itself is in the event).
    async fn followup_prompt(
        &self,
        endpoint: &ForgeEndpoint,
        repo: &RepoRef,
        number: u64,
        cause: &FollowupCause,
        actor: Option<&str>,
    ) -> String {
        let forge = endpoint.forge.as_ref();
        let actor = actor.unwrap_or("a reviewer");
        match cause {
            FollowupCause::Comment {
                comment_id,
                body,
                inline,
            } => {
                let thread = match inline {
                    Some(_) => forge
                        .read_thread(repo, number, *comment_id)
                        .await
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                let place = inline.as_ref().map(|c| (c.path.as_str(), c.line));
                comment_prompt(actor, body, place, &thread)
            }
            FollowupCause::ChangesRequested { review_id, body } => {
                let review = forge
                    .read_review(repo, number, *review_id)
                    .await
                    .unwrap_or_else(|_| Review {
                        id: *review_id,
                        author: actor.to_owned(),
                        state: ReviewState::ChangesRequested,
                        body: body.clone(),
                        comments: Vec::new(),
                    });
                review_prompt(&review)
            }
            FollowupCause::CheckFailed { check_id, name } => {
                let check = forge
                    .read_check_run(repo, *check_id)
                    .await
                    .unwrap_or_else(|_| CheckRunOutput {
                        id: *check_id,
                        name: name.clone(),
                        title: None,
                        summary: None,
                        text: None,
                        annotations: Vec::new(),
                    });
                check_prompt(&check)
            }
        }
    }

    /// A writer approved the held change on the forge: decide its queued approval (as
    /// `approvals approve` does; its worker pushes it) and mark the pull request ready.
    pub(super) async fn mark_ready(
        &self,
        endpoint: &ForgeEndpoint,
        family: &PullRequestFamily,
        number: u64,
        actor: &str,
    ) -> Result<FeedbackOutcome, ForgeError> {
        let task_id = family.known.task_id.clone();
        let pending = self.queue.approvals(false).await?;
        let mut approved = false;
        if let Some(approval) = pending.iter().find(|a| a.task_id == task_id) {
            let decision = QueueDecision {
                decision: Decision::Approve,
                by: format!("{}:{actor}", endpoint.settings.name),
                reason: Some(format!("approving review on #{number}")),
                push: true,
            };
            approved = self
                .queue
                .decide_approval(&approval.approval_id, &decision)
                .await?
                .is_some();
        }
        endpoint
            .forge
            .set_draft(&family.repo, number, false)
            .await?;
        Ok(FeedbackOutcome::MarkedReady { task_id, approved })
    }

    /// A writer asked for a task on issue `issue`: queue it, its pull request closing the
    /// issue, and answer on the issue.
    pub(super) async fn issue_task(
        &self,
        endpoint: &ForgeEndpoint,
        repo: &RepoRef,
        issue: u64,
        task: &str,
    ) -> Result<FeedbackOutcome, ForgeError> {
        let url = format!("https://{}/{}.git", repo.host, repo.path);
        let options = TaskOptions {
            push: true,
            closes: Some(issue),
            ..TaskOptions::default()
        };
        let task_id = self.new_task_id()?;
        let sub =
            submission(task_id.clone(), url, task.to_owned(), &options, None).map_err(|e| {
                ForgeError::InvalidRequest {
                    reason: e.to_string(),
                }
            })?;
        self.queue.submit(&sub).await?;
        let text = format!(
            "forge queued task `{task_id}` for this issue; its {} (branch `{}`) will say \
             `Closes #{issue}`.",
            endpoint.settings.kind.noun(),
            task_id.branch()
        );
        endpoint.forge.comment(repo, issue, &text).await?;
        Ok(FeedbackOutcome::IssueTaskQueued { task_id, issue })
    }
}
