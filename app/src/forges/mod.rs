//! Feedback from forges (issue 39): webhooks and polled events turned into follow-up tasks
//! that resume the pull request's agent session, approvals of held changes, tasks from
//! issues. The rules are the domain's (`forge_domain::forges`); this is the use case.

mod act;
mod feedback;
pub mod known;
mod permissions;
mod poll;

pub use feedback::{
    FeedbackOutcome, FeedbackParts, FeedbackSettings, ForgeEndpoint, ForgeFeedback,
};
pub use permissions::{PERMISSION_TTL, PermissionCache};
pub use poll::PollReport;

#[cfg(test)]
mod tests;
