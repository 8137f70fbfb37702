//! The one integration-test binary of forge-adapter-mcp (link time on 2 cores).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers panic on a bad reply, which fails the test"
)]

mod suite;
