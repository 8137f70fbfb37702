//! Why the egress point could not start.

use std::path::PathBuf;

/// Errors of [`crate::Egress::start`].
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("route {addr}: upstream `{upstream}` is not an http(s) base URL")]
    BadUpstream { addr: String, upstream: String },
    #[error("route {addr}: `{name}` is not a valid header name for a credential")]
    BadCredentialHeader { addr: String, name: String },
    #[error("the egress point must be started inside a tokio runtime")]
    NoRuntime,
    #[error("two routes share the address {addr}")]
    DuplicateRoute { addr: String },
    #[error(
        "socket path {} is {len} bytes, over the 107 a Unix socket allows: choose a shorter socket directory",
        path.display()
    )]
    SocketPathTooLong { path: PathBuf, len: usize },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<EgressError> for std::io::Error {
    fn from(e: EgressError) -> Self {
        let kind = match &e {
            EgressError::Io { source, .. } => source.kind(),
            _ => std::io::ErrorKind::InvalidInput,
        };
        Self::new(kind, e)
    }
}
