//! The event path (issue 39), one use case for the webhook route and `forge poll`: a forge
//! event, already authenticated and decoded, is classified by the domain's rule; a trigger
//! with an actor is acted on only when the forge says the actor may write; then forge acts
//! — a follow-up task on the pull request's branch resuming its agent session, a held change
//! approved and marked ready, a task queued from an issue, a closed pull request remembered.
//!
//! Each delivery acts once ([`ForgeFeedback::deliver`] records its id before acting: a
//! delivery that fails halfway is not acted on twice; the forge's redelivery is a replay).

use std::sync::Arc;

use forge_domain::ForgeError;
use forge_domain::forges::{
    EventContext, ForgeEvent, ForgeKind, ForgeSettings, Ignored, RepoRef, Trigger, classify,
    may_steer,
};
use forge_domain::queue::QueuedTask;
use forge_domain::task::TaskId;
use forge_ports::{Forge, ForgeDeliveries, IdGenerator, TaskQueue, WebhookCodec};
use serde::Serialize;

use super::known::{PullRequestFamily, by_check, by_number, closed, families, words};
use super::permissions::PermissionCache;

/// How many queued tasks are looked through for forge's pull requests.
pub(super) const TASKS_SCANNED: u32 = 2_000;

/// The marker source of a pull request a person closed.
pub(super) const CLOSED: &str = "closed";

/// One forge the worker knows, ready to be spoken to.
#[derive(Clone)]
pub struct ForgeEndpoint {
    pub settings: ForgeSettings,
    pub forge: Arc<dyn Forge>,
    /// The webhook secret (GitHub: the HMAC key; GitLab: the token itself), read by the
    /// composition root from `webhook_secret_env`; `None`: this forge's webhooks are refused.
    pub webhook_secret: Option<Vec<u8>>,
}

/// What the rule is told besides the event (`[delivery]`/`[task]` of the worker's config).
#[derive(Debug, Clone)]
pub struct FeedbackSettings {
    /// The handle a comment mentions (`forge`).
    pub handle: String,
    /// The label that turns an issue into a task (`forge`).
    pub label: String,
    /// forge's own login on the forges: its replies never trigger it.
    pub bot_login: Option<String>,
    /// Follow-ups per pull request (`[task] max_followups`).
    pub max_followups: u32,
}

impl Default for FeedbackSettings {
    fn default() -> Self {
        Self {
            handle: forge_domain::forges::DEFAULT_HANDLE.to_owned(),
            label: forge_domain::forges::DEFAULT_HANDLE.to_owned(),
            bot_login: None,
            max_followups: forge_domain::forges::DEFAULT_MAX_FOLLOWUPS,
        }
    }
}

/// What an event came to; the webhook's 202 body and `forge poll`'s line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FeedbackOutcome {
    /// No configured forge serves the event's repository.
    NoForge {
        host: String,
    },
    /// The delivery id was seen before: nothing done.
    Replayed,
    Ignored {
        reason: Ignored,
    },
    /// The actor may not write to the repository.
    NotAllowed {
        actor: String,
    },
    FollowUpQueued {
        task_id: TaskId,
        parent: TaskId,
    },
    /// The pull request's follow-ups are spent; `said`: the comment saying so was posted now.
    FollowupsExhausted {
        parent: TaskId,
        said: bool,
    },
    MarkedReady {
        task_id: TaskId,
        approved: bool,
    },
    IssueTaskQueued {
        task_id: TaskId,
        issue: u64,
    },
    Closed {
        task_id: TaskId,
    },
}

/// See the module.
pub struct ForgeFeedback {
    pub(super) endpoints: Vec<ForgeEndpoint>,
    pub(super) queue: Arc<dyn TaskQueue>,
    pub(super) deliveries: Arc<dyn ForgeDeliveries>,
    pub(super) ids: Arc<dyn IdGenerator>,
    pub(super) settings: FeedbackSettings,
    codec: Arc<dyn WebhookCodec>,
    permissions: PermissionCache,
}

/// What [`ForgeFeedback`] is made of.
pub struct FeedbackParts {
    pub endpoints: Vec<ForgeEndpoint>,
    pub queue: Arc<dyn TaskQueue>,
    pub deliveries: Arc<dyn ForgeDeliveries>,
    pub ids: Arc<dyn IdGenerator>,
    pub codec: Arc<dyn WebhookCodec>,
    pub settings: FeedbackSettings,
}

impl ForgeFeedback {
    pub fn new(parts: FeedbackParts) -> Self {
        Self {
            endpoints: parts.endpoints,
            queue: parts.queue,
            deliveries: parts.deliveries,
            ids: parts.ids,
            settings: parts.settings,
            codec: parts.codec,
            permissions: PermissionCache::default(),
        }
    }

    /// The forge of `kind` whose webhook secret authenticates `body` with `signature`;
    /// `None`: the delivery is refused (401), nothing is read.
    pub fn authenticate(
        &self,
        kind: ForgeKind,
        signature: Option<&str>,
        body: &[u8],
    ) -> Option<&ForgeEndpoint> {
        self.endpoints(kind).find(|e| {
            e.webhook_secret
                .as_deref()
                .is_some_and(|secret| self.codec.verify(kind, secret, signature, body))
        })
    }

    /// The events of an authenticated delivery.
    ///
    /// # Errors
    /// Why the payload cannot be read (the route answers 400).
    pub fn decode(
        &self,
        kind: ForgeKind,
        event: &str,
        body: &[u8],
    ) -> Result<Vec<ForgeEvent>, String> {
        self.codec.decode(kind, event, body)
    }

    /// The forges of `kind` the worker knows.
    pub fn endpoints(&self, kind: ForgeKind) -> impl Iterator<Item = &ForgeEndpoint> {
        self.endpoints
            .iter()
            .filter(move |e| e.settings.kind == kind)
    }

    /// The forge of `kind` that serves `host`.
    pub fn endpoint(&self, kind: ForgeKind, host: &str) -> Option<&ForgeEndpoint> {
        self.endpoints(kind).find(|e| e.settings.host == host)
    }

    /// Acts on the events of delivery `delivery_id` from a forge of `kind`, once: a
    /// delivery id seen before is [`FeedbackOutcome::Replayed`], and so is an event whose
    /// own key ([`ForgeEvent::key`]) was acted on before (by `forge poll`).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue or the forge cannot be reached.
    pub async fn deliver(
        &self,
        kind: ForgeKind,
        delivery_id: &str,
        events: &[ForgeEvent],
    ) -> Result<Vec<FeedbackOutcome>, ForgeError> {
        if !self
            .deliveries
            .first_delivery(kind.as_str(), delivery_id)
            .await?
        {
            return Ok(vec![FeedbackOutcome::Replayed]);
        }
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            // The event's own key too: one a poll already acted on is a replay here.
            out.push(self.act_once(kind, event).await?);
        }
        Ok(out)
    }

    /// Acts on one event (already known to be new).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue or the forge cannot be reached.
    pub async fn handle(
        &self,
        kind: ForgeKind,
        event: &ForgeEvent,
    ) -> Result<FeedbackOutcome, ForgeError> {
        let Some(repo) = event.repo() else {
            let name = match event {
                ForgeEvent::Other { name } => name.clone(),
                _ => String::new(),
            };
            return Ok(FeedbackOutcome::Ignored {
                reason: Ignored::OtherEvent(name),
            });
        };
        let Some(endpoint) = self.endpoint(kind, &repo.host) else {
            return Ok(FeedbackOutcome::NoForge {
                host: repo.host.clone(),
            });
        };
        let tasks = self.queue.tasks(TASKS_SCANNED).await?;
        let family = self.family(event, repo, &tasks).await?;
        // The repository's own words, as its latest pull request recorded them (serve has
        // no checkout to read its forge.toml from); else the worker's.
        let words = words(&tasks, repo);
        let cx = EventContext {
            handle: words
                .as_ref()
                .map_or(self.settings.handle.as_str(), |w| w.mention.as_str()),
            label: words
                .as_ref()
                .map_or(self.settings.label.as_str(), |w| w.issue_label.as_str()),
            bot_login: self.settings.bot_login.as_deref(),
            pull_request: family.as_ref().map(|f| &f.known),
        };
        let trigger = match classify(event, &cx) {
            Ok(t) => t,
            Err(reason) => return Ok(FeedbackOutcome::Ignored { reason }),
        };
        if let Some(actor) = trigger.actor() {
            let permission = self
                .permissions
                .permission(
                    &endpoint.settings.name,
                    endpoint.forge.as_ref(),
                    repo,
                    actor,
                )
                .await?;
            if !may_steer(permission) {
                return Ok(FeedbackOutcome::NotAllowed {
                    actor: actor.to_owned(),
                });
            }
        }
        self.act(endpoint, repo, family, trigger).await
    }

    async fn act(
        &self,
        endpoint: &ForgeEndpoint,
        repo: &RepoRef,
        family: Option<PullRequestFamily>,
        trigger: Trigger,
    ) -> Result<FeedbackOutcome, ForgeError> {
        match (trigger, family) {
            (Trigger::Closed { task_id, .. }, _) => {
                self.deliveries
                    .first_delivery(CLOSED, task_id.as_str())
                    .await?;
                Ok(FeedbackOutcome::Closed { task_id })
            }
            (Trigger::IssueTask { issue, task, .. }, _) => {
                self.issue_task(endpoint, repo, issue, &task).await
            }
            (Trigger::MarkReady { number, actor, .. }, Some(family)) => {
                self.mark_ready(endpoint, &family, number, &actor).await
            }
            (Trigger::FollowUp { cause, actor, .. }, Some(family)) => {
                self.follow_up(endpoint, &family, &cause, actor.as_deref())
                    .await
            }
            // classify names a pull request only when it was handed one.
            (Trigger::MarkReady { .. } | Trigger::FollowUp { .. }, None) => {
                Ok(FeedbackOutcome::Ignored {
                    reason: Ignored::NotForgesPullRequest,
                })
            }
        }
    }

    /// The family of forge's pull request the event is about (closed when a person closed
    /// it), if any.
    async fn family(
        &self,
        event: &ForgeEvent,
        repo: &RepoRef,
        tasks: &[QueuedTask],
    ) -> Result<Option<PullRequestFamily>, ForgeError> {
        let all = families(tasks);
        let found = match event {
            ForgeEvent::PullRequestComment { number, .. }
            | ForgeEvent::ReviewComment { number, .. }
            | ForgeEvent::Review { number, .. }
            | ForgeEvent::PullRequestClosed { number, .. } => by_number(&all, repo, *number),
            ForgeEvent::CheckCompleted {
                head_sha,
                pull_requests,
                ..
            } => by_check(&all, repo, pull_requests, head_sha),
            _ => None,
        };
        let Some(family) = found.cloned() else {
            return Ok(None);
        };
        let is_closed = self
            .deliveries
            .delivery_seen(CLOSED, family.known.task_id.as_str())
            .await?;
        Ok(Some(if is_closed { closed(family) } else { family }))
    }

    /// A new task id, as `task submit` makes them.
    pub(super) fn new_task_id(&self) -> Result<TaskId, ForgeError> {
        TaskId::new(format!("q-{}", self.ids.run_id())).map_err(|e| ForgeError::InvalidRequest {
            reason: format!("a new task id: {e}"),
        })
    }
}
