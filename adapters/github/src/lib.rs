//! forge-adapter-github: the [`forge_ports::Forge`] port on GitHub (and GitHub Enterprise
//! Server, whose API lives under `https://HOST/api/v3`).
//!
//! octocrab carries the token, the base URL and the waiting out of rate limits (a 403/429
//! with `Retry-After` or `x-ratelimit-reset`); forge names each REST route itself and reads
//! only the fields it needs, so every request it makes is one operation of GitHub's
//! published OpenAPI description (held to it by the testkit's contract fake). What REST
//! cannot do — turning a pull request into a draft and back — goes through GraphQL.

mod api;
mod decode;
mod forge;
mod poll;

pub use forge::GithubForge;
