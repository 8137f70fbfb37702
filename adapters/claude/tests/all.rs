//! The one integration-test binary of forge-adapter-claude.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic there is a failing test"
)]

mod suite;
