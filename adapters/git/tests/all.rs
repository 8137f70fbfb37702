//! One integration-test binary for forge-adapter-git (link time on 2 cores).

// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the fixture helpers
// beside them; a panic in a helper is a failing test just the same.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a panic is a failing test"
)]

mod suite;
