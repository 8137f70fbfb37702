//! The egress point's lifetime: its Unix sockets, their accept loops, and what the sandbox
//! is told (the bridge's argv, the proxy environment).

use std::collections::HashSet;
use std::ffi::OsString;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::EgressConfig;
use crate::denial::Denied;
use crate::error::EgressError;
use crate::proxy::Proxy;
use crate::route::RouteService;
use crate::spec::{BridgeListener, BridgeSpec};

/// The port the proxy listens on inside the sandbox (the sandbox's loopback is its own, so
/// only the routes can take it; the next free one is used then).
const PROXY_PORT: u16 = 3128;

/// Longest Unix socket path (`sun_path` is 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// A running egress point. Stops on [`Egress::stop`], [`Egress::shutdown`] or drop: the
/// listeners and every connection end and the socket files are removed.
pub struct Egress {
    socket_dir: PathBuf,
    sockets: Vec<PathBuf>,
    spec: BridgeSpec,
    proxy_addr: SocketAddr,
    no_proxy: String,
    denials: Option<UnboundedReceiver<Denied>>,
    stop: CancellationToken,
    tasks: TaskTracker,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("socket_dir", &self.socket_dir)
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// Binds one socket per route and one for the proxy in `config.socket_dir` and starts
    /// serving them on the current tokio runtime.
    ///
    /// # Errors
    /// No tokio runtime, a bad `allow_hosts` entry or upstream, two routes on one address, a socket path too
    /// long, or the directory or a socket that cannot be made.
    pub fn start(config: EgressConfig) -> Result<Self, EgressError> {
        Self::start_with(config, crate::allow::check_address)
    }

    /// [`Egress::start`] with the proxy's address rule given (tests reach their own servers
    /// on loopback through the proxy).
    pub(crate) fn start_with(
        config: EgressConfig,
        address_rule: fn(std::net::IpAddr) -> Result<(), crate::DenyReason>,
    ) -> Result<Self, EgressError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(EgressError::NoRuntime);
        }
        let EgressConfig {
            socket_dir,
            routes,
            allow_hosts,
        } = config;
        prepare_dir(&socket_dir)?;
        let mut seen = HashSet::new();
        for route in &routes {
            if !seen.insert(route.addr) {
                return Err(EgressError::DuplicateRoute {
                    addr: route.addr.to_string(),
                });
            }
        }
        let services = routes
            .into_iter()
            .map(|route| RouteService::new(route).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let proxy_addr = free_proxy_addr(&seen);

        let (denials_tx, denials_rx) = mpsc::unbounded_channel();
        let mut egress = Self {
            socket_dir: socket_dir.clone(),
            sockets: Vec::new(),
            spec: BridgeSpec { listen: Vec::new() },
            proxy_addr,
            no_proxy: services
                .iter()
                .map(|s| s.route.addr.to_string())
                .collect::<Vec<_>>()
                .join(","),
            denials: Some(denials_rx),
            stop: CancellationToken::new(),
            tasks: TaskTracker::new(),
        };
        // From here on, an error drops `egress`, which removes what was bound.
        for (n, service) in services.iter().enumerate() {
            let listener = egress.bind(
                &socket_dir.join(format!("route-{n}.sock")),
                service.route.addr,
                service.route.is_http(),
            )?;
            let service = Arc::clone(service);
            egress.accept_loop(listener, move |stream| Arc::clone(&service).serve(stream));
        }
        let proxy = Arc::new(Proxy {
            allow: allow_hosts,
            routes: services,
            denials: denials_tx,
            tasks: egress.tasks.clone(),
            stop: egress.stop.clone(),
            address_rule,
        });
        let listener = egress.bind(&socket_dir.join("proxy.sock"), proxy_addr, false)?;
        egress.accept_loop(listener, move |stream| Arc::clone(&proxy).serve(stream));
        Ok(egress)
    }

    /// The refused connections, as they happen. The first call takes the receiver; later
    /// calls get `None`.
    pub fn denials(&mut self) -> Option<UnboundedReceiver<Denied>> {
        self.denials.take()
    }

    /// The directory holding the sockets: bind it into the sandbox at the same path.
    #[must_use]
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// What the bridge inside is told.
    #[must_use]
    pub fn spec(&self) -> &BridgeSpec {
        &self.spec
    }

    /// The argv prefix to put before the CLI's argv inside the sandbox:
    /// `<forge_exe> __sandbox-bridge --spec <json> --`.
    #[must_use]
    pub fn bridge_args(&self, forge_exe: &Path) -> Vec<OsString> {
        vec![
            forge_exe.as_os_str().to_owned(),
            "__sandbox-bridge".into(),
            "--spec".into(),
            self.spec.to_json().into(),
            "--".into(),
        ]
    }

    /// The environment the agent gets for its network: the proxy for every client that
    /// honours the usual variables (Node's own `fetch` included, `NODE_USE_ENV_PROXY`), and
    /// the routes in `NO_PROXY` so they go straight to the bridge. A client that ignores
    /// `NO_PROXY` still reaches a route: the proxy serves a route's address as the route.
    #[must_use]
    pub fn inside_env(&self) -> Vec<(String, String)> {
        let proxy = format!("http://{}", self.proxy_addr);
        let mut env: Vec<(String, String)> =
            ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
                .into_iter()
                .map(|name| (name.to_owned(), proxy.clone()))
                .collect();
        env.push(("NO_PROXY".to_owned(), self.no_proxy.clone()));
        env.push(("no_proxy".to_owned(), self.no_proxy.clone()));
        env.push(("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()));
        env
    }

    /// Stops serving now: listeners and connections end (at their next poll), the socket
    /// files are removed. Idempotent; also done on drop.
    pub fn stop(&mut self) {
        self.stop.cancel();
        self.tasks.close();
        for socket in &self.sockets {
            let _ = std::fs::remove_file(socket);
        }
    }

    /// [`Egress::stop`], then waits until every task of the egress point has ended.
    pub async fn shutdown(mut self) {
        self.stop();
        self.tasks.wait().await;
    }

    fn bind(
        &mut self,
        path: &Path,
        inside: SocketAddr,
        reset_on_close: bool,
    ) -> Result<UnixListener, EgressError> {
        let len = path.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(EgressError::SocketPathTooLong {
                path: path.to_owned(),
                len,
            });
        }
        // A socket left by a forge that died: the directory is the run's own.
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(|source| EgressError::Io {
            what: "cannot listen on",
            path: path.to_owned(),
            source,
        })?;
        self.sockets.push(path.to_owned());
        self.spec.listen.push(BridgeListener {
            addr: inside,
            socket: path.to_owned(),
            reset_on_close,
        });
        Ok(listener)
    }

    fn accept_loop<F, Fut>(&self, listener: UnixListener, serve: F)
    where
        F: Fn(UnixStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stop.clone();
        let tasks = self.tasks.clone();
        self.tasks.spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = stop.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(e) => {
                            tracing::warn!("egress: accept failed: {e}");
                            tokio::time::sleep(crate::bridge::ACCEPT_BACKOFF).await;
                            continue;
                        }
                    },
                };
                let connection = serve(stream);
                let stop = stop.clone();
                tasks.spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = connection => {}
                    }
                });
            }
        });
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Creates the directory when missing and makes it private (`0700`): the sockets are the
/// run's way out and no other user may use them. Its path must be UTF-8 (it travels in the
/// bridge's JSON spec).
fn prepare_dir(dir: &Path) -> Result<(), EgressError> {
    let io = |what, source| EgressError::Io {
        what,
        path: dir.to_owned(),
        source,
    };
    if dir.to_str().is_none() {
        return Err(io(
            "the socket directory must be a UTF-8 path:",
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create", e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io("cannot make private", e))
}

fn free_proxy_addr(taken: &HashSet<SocketAddr>) -> SocketAddr {
    let mut port = PROXY_PORT;
    loop {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        if !taken.contains(&addr) && !taken.contains(&SocketAddr::from(([0, 0, 0, 0], port))) {
            return addr;
        }
        port = port.wrapping_add(1).max(1024);
    }
}
