//! Delivery (issue 14): what happens to a task's change once the pipeline has scored it.
//!
//! [`Delivery::deliver`] stores the outcome (task row + audit), then applies the gate: risk
//! below the threshold → commit on the task branch (and push when enabled); otherwise →
//! `pending_approval`, the work tree kept, and a notice through every [`Notifier`]. A person
//! then approves (commit and push as above) or rejects (work tree and branch removed);
//! `rollback` undoes a delivered change. [`Delivery::reconcile`] runs on start and repairs
//! what a killed forge left between git and the store (the `Forge-Task` trailer finds the
//! commit) and resends notices that failed.
//!
//! [`Notifier`]: forge_ports::Notifier

mod act;
mod decide;
mod error;
mod notices;
mod pull_request;
mod reconcile;
mod remote;
mod rollback;
mod rows;
mod settings;

pub use decide::Approved;
pub use error::DeliveryError;
pub use pull_request::{FollowupReply, PullRequestTarget};
pub use reconcile::ReconcileReport;
pub use settings::{
    DEFAULT_RECONCILE_GRACE_MS, DeliveryPorts, DeliverySettings, DeliveryStep, StepHook,
};

use std::path::{Path, PathBuf};

/// The delivery use case for one repository.
#[derive(Clone)]
pub struct Delivery {
    ports: DeliveryPorts,
    settings: DeliverySettings,
    repo: PathBuf,
    /// Set by [`Delivery::with_pull_request`]: changes go out as pull requests.
    pull_request: Option<PullRequestTarget>,
    /// The repository's `[delivery] mention` / `issue_label`, recorded with its pull
    /// request for `serve`, which reads webhooks without the repository.
    words: forge_domain::forges::FeedbackWords,
}

impl Delivery {
    /// Delivery for the repository at `repo` (the user's checkout, not a work tree).
    pub fn new(ports: DeliveryPorts, settings: DeliverySettings, repo: impl Into<PathBuf>) -> Self {
        Self {
            ports,
            settings,
            repo: repo.into(),
            pull_request: None,
            words: forge_domain::forges::FeedbackWords::default(),
        }
    }

    /// The same delivery, recording `words` (the repository's handle and issue label) with
    /// the pull requests it opens.
    pub fn with_feedback_words(mut self, words: forge_domain::forges::FeedbackWords) -> Self {
        self.words = words;
        self
    }

    pub fn repo(&self) -> &Path {
        &self.repo
    }

    pub fn settings(&self) -> &DeliverySettings {
        &self.settings
    }

    pub fn ports(&self) -> &DeliveryPorts {
        &self.ports
    }

    fn step(&self, step: DeliveryStep) {
        if let Some(hook) = &self.ports.on_step {
            hook(step);
        }
    }
}
