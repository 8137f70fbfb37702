//! One integration-test binary for forge-adapter-store (link time matters on 2 cores).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]
mod suite;
