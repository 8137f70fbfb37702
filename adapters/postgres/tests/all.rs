//! One integration-test binary for forge-adapter-postgres: the task queue contract
//! (forge-testkit's `queue_contract`) and this adapter's own cases, each on a database of
//! its own, created on the server `FORGE_TEST_POSTGRES_URL` names and dropped after.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]
mod suite;
