//! A contract fake of GitLab's v4 REST API (issue 39), shaped by GitLab's API
//! documentation: the routes forge uses, their parameters and status codes, and the JSON
//! they answer.

pub mod contract;
pub mod fake;
mod routes;
pub mod state;

pub use fake::GitlabFake;
pub use state::{
    FakeDiscussion, FakeJob, FakeMergeRequest, FakeNote, FakePipeline, FakeProject, FakeUser,
    Fault, GitlabState, Recorded,
};
