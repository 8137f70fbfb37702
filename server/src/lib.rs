//! forge-server: forge behind HTTP. A driving adapter beside the command line: it builds
//! runs with the same configuration, agent and adapters as `run` (received from the
//! composition root through [`Composition`]), streams their canonical events as
//! Server-Sent Events that a client can resume by event id, serves the queue's tasks and
//! approvals, and the page with the chat and the board.
//!
//! Loopback by default; a non-loopback address needs a token (the `serve` command refuses
//! one without). Paths in requests are confined to the [`Roots`].
//!
//! A new route is one module in `routes/` and one line in [`routes::ROUTES`]'s table
//! (`routes/mod.rs`).

mod auth;
mod board;
mod composition;
mod error;
mod live;
mod paths;
mod permission_watch;
mod routes;
mod start;
mod state;
mod stored;
#[cfg(test)]
mod testing;

use std::io::Write;
use std::net::SocketAddr;

pub use composition::{Composition, ConfigOverrides, OpenError};
pub use paths::{PathRefused, Roots};
pub use routes::router;
pub use state::{HttpStats, ServerParts, ServerState, Shared};

/// Listens on `addr`, says where on stdout's first line (`listening on http://ADDR`, which
/// scripts and tests read), and serves `state` until Ctrl-C.
///
/// # Errors
/// When the address cannot be bound or the server fails.
pub async fn serve(addr: SocketAddr, state: Shared) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{local}")?;
        out.flush()?;
    }
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
