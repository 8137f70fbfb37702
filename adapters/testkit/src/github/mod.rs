//! A contract fake of GitHub's REST API (issue 39), held to GitHub's published OpenAPI
//! description.

pub mod fake;
mod lists;
pub mod openapi;
pub mod state;

pub use fake::GithubFake;
pub use openapi::{OpenApi, description_path, ensure_installed};
pub use state::{
    FakeCheckRun, FakeComment, FakeLabel, FakePull, FakeReview, FakeReviewComment, Fault,
    GithubState, Recorded,
};
