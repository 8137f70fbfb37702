//! Logger over tracing and Metrics over prometheus-client, plus no-op variants.
