//! Counters and histograms for operators.

use std::time::Duration;

use forge_domain::{ExecutionStatus, ProviderId};

pub trait Metrics: Send + Sync {
    fn execution_started(&self, provider: &ProviderId);
    fn execution_finished(
        &self,
        provider: &ProviderId,
        status: ExecutionStatus,
        duration: Duration,
        timed_out: bool,
        cancelled: bool,
    );
    fn parse_error(&self, provider: &ProviderId);
}
