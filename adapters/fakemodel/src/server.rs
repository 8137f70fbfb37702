//! Starting, observing and stopping the server.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::book::TurnBook;
use crate::conn::{ConnInfo, ResettableListener};
use crate::error::FakeModelError;
use crate::handler::{AppState, handle};
use crate::log::{LoggedRequest, RequestLog};
use crate::reply::IdGen;
use crate::scenario::Scenario;

/// How long a shutdown waits for streams still in flight before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Knobs for [`FakeModelServer::start`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeModelOptions {
    /// Port on 127.0.0.1; `None` or `Some(0)` picks a free one.
    pub port: Option<u16>,
    /// Append every request to this file as one JSON line ([`LoggedRequest`]).
    pub request_log_path: Option<PathBuf>,
}

/// Entry point: `FakeModelServer::start(scenario, options)`.
#[derive(Debug)]
pub struct FakeModelServer;

impl FakeModelServer {
    /// Bind 127.0.0.1 and serve `scenario` in the background of the current tokio runtime.
    ///
    /// # Errors
    /// [`FakeModelError::Io`] when the port cannot be bound or the request log not opened.
    pub async fn start(
        scenario: Scenario,
        options: FakeModelOptions,
    ) -> Result<RunningServer, FakeModelError> {
        let log = RequestLog::open(options.request_log_path.as_ref())?;
        let state = Arc::new(AppState {
            book: TurnBook::new(Arc::new(scenario)),
            log,
            ids: IdGen::Random,
        });
        let bind_to = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0)));
        let listener = tokio::net::TcpListener::bind(bind_to)
            .await
            .map_err(|err| FakeModelError::io(format!("bind {bind_to}"), err))?;
        let addr = listener
            .local_addr()
            .map_err(|err| FakeModelError::io("read the bound address", err))?;
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&state))
            .into_make_service_with_connect_info::<ConnInfo>();
        let listener = ResettableListener::new(listener);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    // Either an explicit shutdown or the handle being dropped stops the server.
                    let _ = stop_rx.await;
                })
                .await
        });
        tracing::debug!(%addr, "fake model server listening");
        Ok(RunningServer {
            addr,
            state,
            stop: Some(stop_tx),
            task: Some(task),
        })
    }
}

/// A server running in the background; dropping it stops it too.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    state: Arc<AppState>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// The bound address (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>` — no path: each CLI appends its own (`/v1/messages`,
    /// `/v1beta/models/…`); codex's provider `base_url` wants `<base_url>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request seen so far, in arrival order.
    pub fn request_log(&self) -> Vec<LoggedRequest> {
        self.state.log.snapshot()
    }

    /// Stop accepting, let in-flight streams finish (briefly), and wait for the server task.
    ///
    /// # Errors
    /// [`FakeModelError::Io`] when the server loop itself failed.
    pub async fn shutdown(mut self) -> Result<(), FakeModelError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(err))) => Err(FakeModelError::io("serve", err)),
            Ok(Err(join)) => Err(FakeModelError::io("serve", std::io::Error::other(join))),
            Err(_elapsed) => {
                task.abort();
                Ok(())
            }
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Serve until `shutdown` completes (the `forge-code-agent fake-model serve` command).
/// The address is logged through `tracing`; use [`FakeModelServer::start`] to read it.
///
/// # Errors
/// As [`FakeModelServer::start`] and [`RunningServer::shutdown`].
pub async fn serve_forever(
    scenario: Scenario,
    options: FakeModelOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), FakeModelError> {
    let server = FakeModelServer::start(scenario, options).await?;
    tracing::info!(base_url = %server.base_url(), "fake model server listening");
    shutdown.await;
    server.shutdown().await
}
