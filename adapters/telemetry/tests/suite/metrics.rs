//! The Prometheus exposition after a handful of runs.

use std::time::Duration;

use forge_adapter_telemetry::{NoopMetrics, PrometheusMetrics};
use forge_domain::{ExecutionStatus, ProviderId};
use forge_ports::Metrics;

fn provider(name: &str) -> ProviderId {
    ProviderId::new(name).unwrap()
}

/// Replays `(provider, status, seconds, timed_out, cancelled)` runs and a parse error per
/// partial run.
fn replay(metrics: &dyn Metrics, runs: &[(&str, ExecutionStatus, f64, bool, bool)]) {
    for (name, status, secs, timed_out, cancelled) in runs {
        let p = provider(name);
        metrics.execution_started(&p);
        if *status == ExecutionStatus::Partial {
            metrics.parse_error(&p);
        }
        metrics.execution_finished(
            &p,
            *status,
            Duration::from_secs_f64(*secs),
            *timed_out,
            *cancelled,
        );
    }
}

#[test]
fn exposition_after_a_few_runs() {
    let metrics = PrometheusMetrics::new();
    replay(
        &metrics,
        &[
            ("claude", ExecutionStatus::Success, 3.5, false, false),
            ("claude", ExecutionStatus::Success, 40.0, false, false),
            ("claude", ExecutionStatus::Partial, 600.0, true, false),
            ("codex", ExecutionStatus::Error, 0.2, false, false),
            ("codex", ExecutionStatus::Partial, 1.5, false, true),
        ],
    );
    insta::assert_snapshot!(canonical(&metrics.encode().unwrap()));
}

/// The exposition with each family's series in label order. Families come out in
/// registration order, but a family keeps its series in a `HashMap`, so their order
/// changes from run to run. The sort is stable and keyed on the labels without `le`, so a
/// histogram's sum, count and buckets stay together and in order.
fn canonical(text: &str) -> String {
    fn series_key(line: &str) -> String {
        let labels = line
            .split_once('{')
            .and_then(|(_, rest)| rest.split_once('}'))
            .map_or("", |(labels, _)| labels);
        labels
            .split(',')
            .filter(|label| !label.starts_with("le="))
            .collect::<Vec<_>>()
            .join(",")
    }
    let mut out: Vec<&str> = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            block.sort_by_key(|l| series_key(l));
            out.append(&mut block);
            out.push(line);
        } else {
            block.push(line);
        }
    }
    block.sort_by_key(|l| series_key(l));
    out.append(&mut block);
    out.join("\n")
}

#[test]
fn canonical_order_is_by_series_and_keeps_buckets_in_order() {
    let text = "# TYPE h histogram\nh_sum{provider=\"b\"} 1\nh_bucket{le=\"2.0\",provider=\"b\"} 1\nh_bucket{le=\"10.0\",provider=\"b\"} 1\nh_sum{provider=\"a\"} 2\nh_bucket{le=\"2.0\",provider=\"a\"} 0\n# EOF";
    assert_eq!(
        canonical(text),
        "# TYPE h histogram\nh_sum{provider=\"a\"} 2\nh_bucket{le=\"2.0\",provider=\"a\"} 0\nh_sum{provider=\"b\"} 1\nh_bucket{le=\"2.0\",provider=\"b\"} 1\nh_bucket{le=\"10.0\",provider=\"b\"} 1\n# EOF"
    );
}

#[test]
fn a_fresh_registry_exposes_no_series() {
    // prometheus-client leaves out families with no series yet.
    assert_eq!(PrometheusMetrics::default().encode().unwrap(), "# EOF\n");
}

#[test]
fn noop_metrics_accept_everything() {
    replay(
        &NoopMetrics,
        &[("claude", ExecutionStatus::Error, 1.0, true, true)],
    );
}
