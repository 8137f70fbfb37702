//! The one integration-test binary of forge-adapter-process: real children (the testkit's
//! `fake-agent-cli`) spawned through `TokioProcessRunner`.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers panic on failure, which is a failing test"
)]

mod suite;
