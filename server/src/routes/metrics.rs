//! `GET /metrics`: the runtime's Prometheus metrics plus the server's own.

use std::fmt::Write;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::get;
    axum::Router::new().route("/metrics", get(metrics))
}

/// Counts every request by method, route template and status.
pub async fn count_requests(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    state
        .http
        .request(&method, &route, response.status().as_u16());
    response
}

pub async fn metrics(State(state): State<Shared>) -> Response {
    let runtime = state.composition.encode_metrics();
    let mut text: String = runtime
        .lines()
        .filter(|l| *l != "# EOF")
        .flat_map(|l| [l, "\n"])
        .collect();
    let _ = server_metrics(&state, &mut text);
    text.push_str("# EOF\n");
    (
        [(
            "content-type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

fn server_metrics(state: &Shared, out: &mut String) -> std::fmt::Result {
    writeln!(out, "# HELP forge_http_requests HTTP requests served.")?;
    writeln!(out, "# TYPE forge_http_requests counter")?;
    for ((method, route, status), n) in state.http.requests() {
        writeln!(
            out,
            "forge_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
            route.replace('"', "")
        )?;
    }
    gauge(
        out,
        "forge_http_open_streams",
        "Event streams open now.",
        state.http.open_streams(),
    )?;
    writeln!(out, "# HELP forge_http_streams Event streams opened.")?;
    writeln!(out, "# TYPE forge_http_streams counter")?;
    writeln!(
        out,
        "forge_http_streams_total {}",
        state.http.streams_total()
    )?;
    gauge(
        out,
        "forge_run_subscribers",
        "Subscribers of runs now.",
        state.runs.subscribers(),
    )?;
    let runs = state.runs.all();
    let running = runs.iter().filter(|r| !r.is_finished()).count();
    gauge(
        out,
        "forge_runs_running",
        "Runs of this server still going.",
        running,
    )?;
    gauge(
        out,
        "forge_runs_known",
        "Runs this server holds in memory.",
        runs.len(),
    )?;
    let sink = state.sink.as_ref().map(|s| s.totals()).unwrap_or_default();
    for (name, help, value) in [
        (
            "forge_sink_delivered",
            "Events the event sink accepted.",
            sink.delivered,
        ),
        (
            "forge_sink_retries",
            "Event sink delivery retries.",
            sink.retries,
        ),
        (
            "forge_sink_dropped",
            "Events dropped by the event sink.",
            sink.dropped,
        ),
    ] {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} counter")?;
        writeln!(out, "{name}_total {value}")?;
    }
    Ok(())
}

fn gauge(out: &mut String, name: &str, help: &str, value: usize) -> std::fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} gauge")?;
    writeln!(out, "{name} {value}")
}
