//! The egress point over real sockets: a test upstream on loopback, clients on the Unix
//! sockets the bridge would use.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

mod proxy;
mod routes;
mod support;
