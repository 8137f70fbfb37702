//! The one integration-test binary of forge-adapter-gemini.

// clippy.toml allows these inside `#[test]` functions only; the helpers are test code too.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a panic is a failing test"
)]

mod suite;
