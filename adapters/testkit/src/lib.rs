//! forge-testkit: hand-written fakes of every port, fixture loaders, and the fake agent CLI
//! binary (`fake-agent-cli`) that tests drive through scenario knobs.
//!
//! Fakes are adapters too: they implement the ports, so they live beside the real adapters
//! and the use cases are tested against them.

pub mod bench;
pub mod delivery;
pub mod fake_cli;
pub mod fakes;
pub mod fixtures;
pub mod forge_deliveries_contract;
pub mod github;
pub mod gitlab;
pub mod permission_contract;
pub mod postgres;
pub mod procs;
pub mod props;
pub mod queue_contract;
pub mod reorder;
pub mod session_archives_contract;
pub mod share_contract;
pub mod tcp_proxy;
