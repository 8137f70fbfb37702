//! Exit codes: from a run's result, and for failures before a run.

use std::fmt;

use forge_app::config::ConfigError;
use forge_domain::{ExecutionResult, ExecutionStatus};

pub const SUCCESS: u8 = 0;
pub const RUN_ERROR: u8 = 1;
pub const USAGE: u8 = 2;
pub const PARTIAL: u8 = 3;
pub const TIMEOUT: u8 = 124;
pub const CANCELLED: u8 = 130;

/// cancelled → 130, timed out → 124, partial → 3, error → 1, success → 0.
pub fn exit_code_of(result: &ExecutionResult) -> u8 {
    if result.was_cancelled() {
        CANCELLED
    } else if result.timed_out() {
        TIMEOUT
    } else {
        match result.status {
            ExecutionStatus::Success => SUCCESS,
            ExecutionStatus::Partial => PARTIAL,
            ExecutionStatus::Error => RUN_ERROR,
        }
    }
}

/// Why a command could not do its job.
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments or input (exit 2).
    Usage(String),
    /// Bad configuration (exit 2).
    Config(ConfigError),
    /// Anything else (exit 1).
    Other(anyhow::Error),
}

impl Failure {
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) | Failure::Config(_) => USAGE,
            Failure::Other(_) => RUN_ERROR,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) => f.write_str(m),
            Failure::Config(e) => write!(f, "{e}"),
            Failure::Other(e) => write!(f, "{e:#}"),
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::Config(e)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Other(e.into())
    }
}
