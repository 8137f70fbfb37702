//! The one integration-test binary of forge-adapter-codex.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers panic on a bad fixture or request, which fails the test"
)]

mod suite;
