//! [`PrometheusMetrics`]: the [`Metrics`] port over `prometheus-client`, and [`NoopMetrics`].

use std::fmt;
use std::time::Duration;

use forge_domain::{ExecutionStatus, ProviderId};
use forge_ports::Metrics;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::logger::status_name;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabels {
    provider: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    provider: String,
    status: String,
}

type DurationFamily = Family<ProviderLabels, Histogram, fn() -> Histogram>;

/// Agent runs take seconds to an hour: buckets from 1 s doubling to 2048 s (~34 min), the
/// last one open-ended.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 12))
}

/// Counters and a duration histogram per provider, in a registry this value owns (no
/// global state: tests snapshot it, a server exposes [`PrometheusMetrics::encode`]).
#[derive(Debug)]
pub struct PrometheusMetrics {
    registry: Registry,
    executions: Family<ProviderLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    timeouts: Family<ProviderLabels, Counter>,
    cancellations: Family<ProviderLabels, Counter>,
    parse_errors: Family<ProviderLabels, Counter>,
    duration: DurationFamily,
}

impl PrometheusMetrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let executions = Family::default();
        let failures = Family::default();
        let timeouts = Family::default();
        let cancellations = Family::default();
        let parse_errors = Family::default();
        let duration: DurationFamily =
            Family::new_with_constructor(duration_histogram as fn() -> Histogram);
        // Counter names get their `_total` suffix from the encoder.
        registry.register("forge_executions", "Agent runs started", executions.clone());
        registry.register(
            "forge_execution_failures",
            "Agent runs that ended with status error or partial",
            failures.clone(),
        );
        registry.register(
            "forge_timeouts",
            "Agent runs stopped by forge's deadline",
            timeouts.clone(),
        );
        registry.register(
            "forge_cancellations",
            "Agent runs cancelled by the caller",
            cancellations.clone(),
        );
        registry.register(
            "forge_parse_errors",
            "Output lines of an agent CLI that could not be decoded",
            parse_errors.clone(),
        );
        registry.register(
            "forge_execution_duration_seconds",
            "Wall-clock duration of agent runs",
            duration.clone(),
        );
        Self {
            registry,
            executions,
            failures,
            timeouts,
            cancellations,
            parse_errors,
            duration,
        }
    }

    /// The registry, to add a program's own metrics next to forge's.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The OpenMetrics text exposition of every metric.
    ///
    /// # Errors
    /// [`fmt::Error`] when the encoder fails (it does not for the metrics registered here).
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

impl Default for PrometheusMetrics {
    fn default() -> Self {
        Self::new()
    }
}

fn provider_labels(provider: &ProviderId) -> ProviderLabels {
    ProviderLabels {
        provider: provider.to_string(),
    }
}

impl Metrics for PrometheusMetrics {
    fn execution_started(&self, provider: &ProviderId) {
        self.executions
            .get_or_create(&provider_labels(provider))
            .inc();
    }

    fn execution_finished(
        &self,
        provider: &ProviderId,
        status: ExecutionStatus,
        duration: Duration,
        timed_out: bool,
        cancelled: bool,
    ) {
        let labels = provider_labels(provider);
        self.duration
            .get_or_create(&labels)
            .observe(duration.as_secs_f64());
        if status != ExecutionStatus::Success {
            self.failures
                .get_or_create(&FailureLabels {
                    provider: labels.provider.clone(),
                    status: status_name(status).to_owned(),
                })
                .inc();
        }
        if timed_out {
            self.timeouts.get_or_create(&labels).inc();
        }
        if cancelled {
            self.cancellations.get_or_create(&labels).inc();
        }
    }

    fn parse_error(&self, provider: &ProviderId) {
        self.parse_errors
            .get_or_create(&provider_labels(provider))
            .inc();
    }
}

/// Counts nothing, for library users who want no metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetrics;

impl Metrics for NoopMetrics {
    fn execution_started(&self, _provider: &ProviderId) {}
    fn execution_finished(
        &self,
        _provider: &ProviderId,
        _status: ExecutionStatus,
        _duration: Duration,
        _timed_out: bool,
        _cancelled: bool,
    ) {
    }
    fn parse_error(&self, _provider: &ProviderId) {}
}
