//! What every handler shares: the roots, the token, the runs, the counters.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use forge_app::Runtime;
use forge_ports::{EventSink, ShareLinks, TaskQueue};

use crate::composition::Composition;
use crate::live::RunTable;
use crate::paths::Roots;

pub type Shared = Arc<ServerState>;

pub struct ServerState {
    pub roots: Roots,
    pub token: Option<String>,
    pub runs: RunTable,
    /// The runtime every run gets (with metrics that `/metrics` exposes).
    pub runtime: Runtime,
    /// Configuration, providers, stores and delivery, as the composition root makes them.
    pub composition: Arc<dyn Composition>,
    pub http: Arc<HttpStats>,
    /// The event sink every run's events are copied to, if any.
    pub sink: Option<Arc<dyn EventSink>>,
    /// `serve --queue`: the task queue whose tasks `/v1/tasks` shows, whichever worker runs
    /// them.
    pub queue: Option<Arc<dyn TaskQueue>>,
    /// The share links kept in the queue's database (the board's read-only links).
    pub shares: Option<Arc<dyn ShareLinks>>,
    /// What `GET /v1/board` knows of the running tasks' events (the last seq read and the
    /// last stage), kept between requests so a reload reads only the events stored since,
    /// and none when the queue's change counter has not moved.
    pub board_stages: tokio::sync::Mutex<crate::routes::board::BoardStages>,
    /// The boards pages received, until their live stream starts from them.
    pub board_snapshots: Mutex<crate::board::snapshots::Snapshots>,
    /// The pending permission requests, read once for every open stream (`None`: the
    /// composition keeps none).
    pub permissions: Option<Arc<crate::permission_watch::PermissionWatch>>,
}

/// What the composition root hands the server.
pub struct ServerParts {
    pub roots: Roots,
    /// The bearer token every API route requires; `None`: none (loopback only).
    pub token: Option<String>,
    pub runtime: Runtime,
    pub composition: Arc<dyn Composition>,
    pub sink: Option<Arc<dyn EventSink>>,
    /// `serve --queue`: the queue and the share links kept in its database.
    pub queue: Option<(Arc<dyn TaskQueue>, Arc<dyn ShareLinks>)>,
}

impl ServerState {
    /// The shared state of a server over `parts`.
    pub fn new(parts: ServerParts) -> Shared {
        let (queue, shares) = parts.queue.unzip();
        let permissions = parts
            .composition
            .permission_store()
            .map(crate::permission_watch::PermissionWatch::new);
        Arc::new(Self {
            roots: parts.roots,
            token: parts.token,
            runs: RunTable::default(),
            runtime: parts.runtime,
            composition: parts.composition,
            http: Arc::new(HttpStats::default()),
            sink: parts.sink,
            queue,
            shares,
            board_stages: tokio::sync::Mutex::default(),
            board_snapshots: Mutex::default(),
            permissions,
        })
    }
}

/// Counters of the HTTP side, for `/metrics`.
#[derive(Default)]
pub struct HttpStats {
    /// (method, route, status) → requests.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    open_streams: AtomicUsize,
    streams_total: AtomicU64,
}

impl HttpStats {
    pub fn request(&self, method: &str, route: &str, status: u16) {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        *requests
            .entry((method.to_owned(), route.to_owned(), status))
            .or_default() += 1;
    }

    pub fn requests(&self) -> Vec<((String, String, u16), u64)> {
        let requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    pub fn open_streams(&self) -> usize {
        self.open_streams.load(Ordering::Relaxed)
    }

    pub fn streams_total(&self) -> u64 {
        self.streams_total.load(Ordering::Relaxed)
    }

    /// Counts an SSE stream as open until the guard drops.
    pub fn stream_opened(self: &Arc<Self>) -> StreamGuard {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        self.streams_total.fetch_add(1, Ordering::Relaxed);
        StreamGuard(Arc::clone(self))
    }
}

pub struct StreamGuard(Arc<HttpStats>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}
