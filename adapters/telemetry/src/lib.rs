//! Logger over tracing and Metrics over prometheus-client, plus no-op variants; the system
//! clock and time-sortable run ids.
//!
//! Nothing here touches global state unless asked: [`PrometheusMetrics`] owns its registry
//! (snapshot-testable, several per process if wanted), and only [`init_tracing`], called by
//! a binary, installs a global subscriber.

mod clock;
mod ids;
mod init;
mod logger;
mod metrics;

pub use clock::SystemClock;
pub use ids::UuidV7Ids;
pub use init::{InitTracingError, init_tracing};
pub use logger::{NoopLogger, TracingLogger, TracingRunLogger};
pub use metrics::{NoopMetrics, PrometheusMetrics};
