//! One integration-test binary: the bridge, run for real (inside bubblewrap where the test
//! needs the sandbox's own network).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

mod suite;
