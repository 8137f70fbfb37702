//! What delivery is built from.

use std::sync::Arc;

use forge_domain::delivery::DEFAULT_RISK_THRESHOLD;
use forge_ports::{Clock, CommitAuthor, FileStore, Notifier, TaskStore, Vcs};

/// The ports delivery works through.
#[derive(Clone)]
pub struct DeliveryPorts {
    pub store: Arc<dyn TaskStore>,
    pub vcs: Arc<dyn Vcs>,
    /// For the task's `report.json` (kept in step with the store so `task gc` sees a
    /// pending approval).
    pub files: Arc<dyn FileStore>,
    /// Every configured channel; none is fine (the approval is stored all the same).
    pub notifiers: Vec<Arc<dyn Notifier>>,
    pub clock: Arc<dyn Clock>,
    /// Called at each [`DeliveryStep`]; fault-injection tests stop the process there.
    pub on_step: Option<StepHook>,
}

/// See [`DeliveryPorts::on_step`].
pub type StepHook = Arc<dyn Fn(DeliveryStep) + Send + Sync>;

/// The points between two durable writes (git, then the store, or the reverse) where a
/// killed forge leaves work for reconciliation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStep {
    /// The outcome row is stored; nothing is committed or held yet.
    Stored,
    /// git has the commit; the store does not know it yet.
    Committed,
    /// An approval was decided in the store; its commit or removal has not happened.
    Decided,
}

impl DeliveryStep {
    /// The name a test hook is configured with.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "stored" => Some(DeliveryStep::Stored),
            "committed" => Some(DeliveryStep::Committed),
            "decided" => Some(DeliveryStep::Decided),
            _ => None,
        }
    }
}

/// `[delivery]` as the use case needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverySettings {
    /// Risk below it commits; at or above it waits for approval.
    pub risk_threshold: u8,
    pub push: bool,
    pub remote: String,
    /// `None`: git's configured identity.
    pub author: Option<CommitAuthor>,
    /// A template with `{type}`, `{title}`, `{summary}`, `{task_id}`; `None`: forge's
    /// default. The `Forge-Task` trailer is always appended.
    pub message: Option<String>,
    /// Remove the work tree once the change is committed or rejected (the branch stays when
    /// committed).
    pub cleanup: bool,
    /// Who the audit log names for this process's decisions (`$USER`, or `forge`).
    pub actor: String,
    /// Reconciliation leaves alone a task whose row changed more recently than this: it may
    /// be another forge delivering it right now.
    pub reconcile_grace_ms: u64,
}

/// A delivery step takes seconds (a commit, a push, a notice with retries); a row untouched
/// for a minute belongs to a process that is gone.
pub const DEFAULT_RECONCILE_GRACE_MS: u64 = 60_000;

impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            risk_threshold: DEFAULT_RISK_THRESHOLD,
            push: false,
            remote: "origin".to_owned(),
            author: None,
            message: None,
            cleanup: true,
            actor: "forge".to_owned(),
            reconcile_grace_ms: DEFAULT_RECONCILE_GRACE_MS,
        }
    }
}
