//! Failures of the fake model server itself (not the failures it simulates).

use forge_domain::ForgeError;

/// What can go wrong loading a scenario or running the server.
#[derive(Debug, thiserror::Error)]
pub enum FakeModelError {
    /// The scenario text is not a valid scenario.
    #[error("invalid scenario: {reason}")]
    Scenario { reason: String },

    /// No embedded scenario has that name.
    #[error("unknown built-in scenario {name:?} (known: {known})")]
    UnknownScenario { name: String, known: String },

    /// Binding, serving or writing the request log failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl FakeModelError {
    pub(crate) fn scenario(reason: impl Into<String>) -> Self {
        FakeModelError::Scenario {
            reason: reason.into(),
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        FakeModelError::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<FakeModelError> for ForgeError {
    fn from(err: FakeModelError) -> Self {
        match err {
            FakeModelError::Io { context, source } => ForgeError::io(context, source),
            other => ForgeError::InvalidRequest {
                reason: other.to_string(),
            },
        }
    }
}
