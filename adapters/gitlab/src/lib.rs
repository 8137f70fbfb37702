//! forge-adapter-gitlab: the [`forge_ports::Forge`] port on GitLab (gitlab.com and
//! self-managed instances, whose API lives under `https://HOST/api/v4`).
//!
//! The `gitlab` crate's typed endpoints name each v4 route and encode its parameters;
//! forge sends them through its own client (`client.rs`: the `PRIVATE-TOKEN` header, a 429
//! waited out after `Retry-After`, the token masked in every error). Two discussion routes
//! the crate lacks are written as its endpoints are (`endpoints.rs`). GitLab's words for
//! forge's: a merge request (`iid`) is the pull request, a `Draft:` title the draft flag,
//! a note the comment, a discussion the review thread, a pipeline's failed jobs' logs the
//! check's output, a member's access level (30, Developer, and above steer) the
//! permission. Held to GitLab's documented API by the testkit's contract fake.

mod checks;
mod client;
mod decode;
mod endpoints;
mod error;
mod forge;
mod members;
mod poll;
mod title;
mod trace;

pub use forge::GitlabForge;
