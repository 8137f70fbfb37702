//! The one integration-test binary of forge-adapter-fakemodel (link time on 2 cores).

// clippy's allow-*-in-tests covers `#[test]` functions only, not the harness helpers beside
// them; a panic in a helper is a failing test just the same.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test helpers: a panic is a failing test, eprintln notes a skipped CLI check"
)]

mod suite;
