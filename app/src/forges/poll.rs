//! `forge poll` (issue 39, a worker the forge cannot reach): the same events a webhook
//! would carry, read through each forge's API from a stored cursor, fed to the same path
//! ([`ForgeFeedback::handle`]) under the same once-only rule — every event is recorded by
//! its own key ([`ForgeEvent::key`]) before it is acted on, whichever way it came, so an
//! event seen by a webhook and by a poll acts once.
//!
//! Which repositories: those of forge's open pull requests in the queue (their reviews and
//! the checks of their head commits are read too), and any the caller names. A repository
//! whose forge cannot be reached keeps its cursor, and an event that could not be acted on
//! is forgotten again: the next pass reads and acts on it (nothing lost, nothing twice).

use std::collections::BTreeMap;

use forge_domain::ForgeError;
use forge_domain::forges::{ForgeEvent, ForgeKind, PolledPull, PullRequestState, RepoRef};
use serde::Serialize;

use super::feedback::{CLOSED, FeedbackOutcome, ForgeFeedback, TASKS_SCANNED};
use super::known::families;

/// What one repository's poll came to; `forge poll`'s line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PollReport {
    /// The `[forges.NAME]` that serves it.
    pub forge: String,
    /// `HOST/PATH`.
    pub repo: String,
    /// One per event read, in order.
    pub outcomes: Vec<FeedbackOutcome>,
    /// The cursor stored now (unchanged when nothing new was read or on an error).
    pub cursor: Option<String>,
    /// Why this repository's poll stopped; its cursor did not move.
    pub error: Option<String>,
}

/// The store source events are recorded under, per forge kind: a webhook's and a poll's
/// record of the same event are one row.
pub(super) fn event_source(kind: ForgeKind) -> String {
    format!("{}-event", kind.as_str())
}

/// The store source of the cursor of `repo` on forge `name`.
fn cursor_source(name: &str, repo: &RepoRef) -> String {
    format!("poll:{name}:{}/{}", repo.host, repo.path)
}

impl ForgeFeedback {
    /// One pass over the repositories of forge's open pull requests and `extra` (URLs).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when a URL of `extra` names no repository of a forge
    /// this worker has a token for (nothing is polled then); [`ForgeError::Io`] when the
    /// queue cannot be read. A forge that fails is a report's `error`, not an `Err`: the
    /// other repositories are still polled.
    pub async fn poll(&self, extra: &[String]) -> Result<Vec<PollReport>, ForgeError> {
        let targets = self.poll_targets(extra).await?;
        let mut reports = Vec::with_capacity(targets.len());
        for ((index, repo), pulls) in targets {
            reports.push(self.poll_repo(index, &repo, &pulls).await);
        }
        Ok(reports)
    }

    /// Each repository to poll, by the index of the endpoint that serves it, with forge's
    /// open pull requests on it.
    async fn poll_targets(
        &self,
        extra: &[String],
    ) -> Result<BTreeMap<(usize, RepoRef), Vec<PolledPull>>, ForgeError> {
        let serving = |repo: &RepoRef| {
            self.endpoints
                .iter()
                .position(|e| e.settings.host == repo.host)
        };
        let mut targets: BTreeMap<(usize, RepoRef), Vec<PolledPull>> = BTreeMap::new();
        for url in extra {
            let repo = RepoRef::parse(url).ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!(
                    "--repo {url}: not a forge repository URL (https://HOST/OWNER/REPO)"
                ),
            })?;
            let index = serving(&repo).ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!(
                    "--repo {url}: no [forges.NAME] with its token set serves {}",
                    repo.host
                ),
            })?;
            targets.entry((index, repo)).or_default();
        }
        let tasks = self.queue.tasks(TASKS_SCANNED).await?;
        for family in families(&tasks) {
            if family.known.info.state != PullRequestState::Open
                || self
                    .deliveries
                    .delivery_seen(CLOSED, family.known.task_id.as_str())
                    .await?
            {
                continue;
            }
            let Some(index) = serving(&family.repo) else {
                continue;
            };
            targets
                .entry((index, family.repo.clone()))
                .or_default()
                .push(PolledPull {
                    number: family.known.info.number,
                    head_sha: family.known.head_sha.clone(),
                });
        }
        Ok(targets)
    }

    /// Reads `repo`'s events from its cursor and acts on each new one; stores the new
    /// cursor only when every event was acted on.
    async fn poll_repo(&self, index: usize, repo: &RepoRef, pulls: &[PolledPull]) -> PollReport {
        let Some(endpoint) = self.endpoints.get(index) else {
            return PollReport {
                forge: String::new(),
                repo: format!("{}/{}", repo.host, repo.path),
                outcomes: Vec::new(),
                cursor: None,
                error: Some("no forge serves it".into()),
            };
        };
        let mut report = PollReport {
            forge: endpoint.settings.name.clone(),
            repo: format!("{}/{}", repo.host, repo.path),
            outcomes: Vec::new(),
            cursor: None,
            error: None,
        };
        let source = cursor_source(&endpoint.settings.name, repo);
        let result = async {
            let cursor = self.deliveries.cursor(&source).await?;
            let read = endpoint
                .forge
                .events_since(repo, pulls, cursor.as_deref())
                .await?;
            for event in &read.events {
                let outcome = self.act_once(endpoint.settings.kind, event).await?;
                report.outcomes.push(outcome);
            }
            if let Some(next) = &read.cursor {
                self.deliveries.set_cursor(&source, next).await?;
            }
            Ok::<_, ForgeError>(read.cursor.or(cursor))
        }
        .await;
        match result {
            Ok(cursor) => report.cursor = cursor,
            Err(e) => report.error = Some(e.to_string()),
        }
        report
    }

    /// Acts on `event` unless its key was recorded before (by a webhook or an earlier
    /// poll); an event that could not be acted on is forgotten again, so the next pass
    /// tries it.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store, the queue or the forge cannot be reached.
    pub(super) async fn act_once(
        &self,
        kind: ForgeKind,
        event: &ForgeEvent,
    ) -> Result<FeedbackOutcome, ForgeError> {
        let Some(key) = event.key() else {
            return self.handle(kind, event).await;
        };
        let source = event_source(kind);
        if !self.deliveries.first_delivery(&source, &key).await? {
            return Ok(FeedbackOutcome::Replayed);
        }
        match self.handle(kind, event).await {
            Ok(outcome) => Ok(outcome),
            Err(e) => {
                // Best effort: if the store is down too, the error below says why and the
                // event stays recorded.
                let _ = self.deliveries.forget_delivery(&source, &key).await;
                Err(e)
            }
        }
    }
}
