//! The one integration-test binary of forge-adapter-acp.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failing test"
)]

mod suite;
