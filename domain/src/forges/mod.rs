//! Forges: the hosts where a team reviews — GitHub (and GitHub Enterprise) and GitLab — and
//! the pull request (a GitLab merge request) that delivers a task's change to them (issue 39).
//!
//! Pure rules only: which forges the worker knows (`[forges.NAME]`) and which one serves a
//! repository URL, the pull request's title and body rendered from the task report, draft
//! when the change is held, who may steer the agent from the forge, how many follow-ups a
//! pull request may cause, and what a forge event (already decoded from a webhook or the
//! API by an adapter) asks forge to do. HTTP, signatures and tokens live in adapters.

pub mod classify;
pub mod config;
pub mod event;
pub mod feedback;
pub mod followups;
pub mod mention;
pub mod permission;
pub mod poll;
pub mod pull_request;
pub mod reply;
pub mod repo;

pub use classify::{
    Classified, EventContext, FollowupCause, Ignored, KnownPullRequest, Trigger, classify,
};
pub use config::{ForgeConfigError, ForgeKind, ForgeSettings, default_github};
pub use event::{CheckConclusion, ForgeEvent, ReviewComment, ReviewState};
pub use feedback::{
    Annotation, CheckRunOutput, Review, ThreadComment, check_prompt, comment_prompt, review_prompt,
};
pub use followups::{DEFAULT_MAX_FOLLOWUPS, FollowupBudget, followup_budget};
pub use mention::{DEFAULT_HANDLE, mentions, task_after_mention};
pub use permission::{GITLAB_DEVELOPER, GithubRole, Permission, may_steer};
pub use poll::{PolledEvents, PolledPull, at_or_after, later_cursor};
pub use pull_request::{
    FeedbackWords, PullRequestBody, PullRequestDelivery, PullRequestInfo, PullRequestState, marker,
    render,
};
pub use reply::followup_reply;
pub use repo::{RepoRef, serving_forge};
