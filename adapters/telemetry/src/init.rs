//! [`init_tracing`]: the global subscriber for binaries.

use tracing_subscriber::EnvFilter;

#[derive(Debug, thiserror::Error)]
pub enum InitTracingError {
    #[error("invalid log filter {filter:?}: {reason}")]
    BadFilter { filter: String, reason: String },
    #[error("a global tracing subscriber is already set")]
    AlreadySet,
}

/// Installs a global subscriber writing to stderr (stdout belongs to the program's output:
/// JSON results, event streams), as JSON lines or human-readable text, filtered by `filter`
/// in `RUST_LOG` syntax (`info`, `forge=debug,warn`).
///
/// # Errors
/// [`InitTracingError::BadFilter`] when `filter` does not parse;
/// [`InitTracingError::AlreadySet`] when a global subscriber exists already (the existing
/// one stays; nothing panics).
pub fn init_tracing(json: bool, filter: &str) -> Result<(), InitTracingError> {
    let env_filter = EnvFilter::try_new(filter).map_err(|e| InitTracingError::BadFilter {
        filter: filter.to_owned(),
        reason: e.to_string(),
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr);
    let installed = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    installed.map_err(|_| InitTracingError::AlreadySet)
}
