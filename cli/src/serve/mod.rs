//! `serve`: forge behind HTTP. An inbound adapter like the command line: it builds runs
//! with the same configuration, agent and adapters as `run`, and streams their canonical
//! events as Server-Sent Events that a client can resume by event id.
//!
//! Loopback by default; a non-loopback address needs a token. Paths in requests are
//! confined to the roots (`--root`, `[server] roots`, else the directory `serve` started
//! in).

mod auth;
mod board;
mod error;
pub(crate) mod live;
mod paths;
mod routes;
mod start;
mod state;
mod stored;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use forge_adapter_sink::HttpEventSink;
use forge_adapter_telemetry::PrometheusMetrics;

use crate::compose;
use crate::config_load::user_config_file;
use crate::exit::Failure;

pub use paths::{PathRefused, Roots};
pub use routes::router;
pub use state::{HttpStats, ServerState, Shared};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the first stdout line says which)
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR")]
    pub addr: SocketAddr,
    /// Bearer token every API route requires (needed for a non-loopback address)
    #[arg(
        long,
        env = "FORGE_SERVER_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// A directory requests may name as workdir, with everything below it (repeatable)
    /// [default: `[server] roots` of the user config, else the current directory]
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// POST each event of every run to this URL, best effort (bearer token:
    /// FORGE_EVENT_SINK_TOKEN)
    #[arg(long, value_name = "URL")]
    pub event_sink: Option<String>,
    /// Serve the tasks of this queue under /v1/tasks (every worker's): postgres://…,
    /// postgresql://… or sqlite://PATH [default: `[queue] url` of the user config]
    #[arg(long, value_name = "URL", env = crate::cmd::queue::QUEUE_ENV)]
    pub queue: Option<String>,
}

pub async fn run(args: ServeArgs) -> Result<u8, Failure> {
    let token = args.token.filter(|t| !t.is_empty());
    if !args.addr.ip().is_loopback() && token.is_none() {
        return Err(Failure::Usage(format!(
            "refusing to listen on {} without a token: pass --token or set FORGE_SERVER_TOKEN",
            args.addr
        )));
    }
    let roots = if args.roots.is_empty() {
        configured_roots()?
    } else {
        args.roots
    };
    let roots = Roots::new(&roots).map_err(|e| Failure::Usage(e.to_string()))?;
    let sink = match &args.event_sink {
        Some(url) => Some(compose::event_sink(url).map_err(Failure::Usage)?),
        None => None,
    };
    let queue = match crate::cmd::queue::queue_url(args.queue.as_deref())? {
        Some(url) => Some(crate::cmd::queue::open_with_shares(&url).await?),
        None => None,
    };
    let state = build_state(roots, token, sink, queue);
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
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
        .await?;
    Ok(0)
}

/// The shared state over the real adapters, with Prometheus metrics.
pub fn build_state(
    roots: Roots,
    token: Option<String>,
    sink: Option<Arc<HttpEventSink>>,
    queue: Option<(
        Arc<dyn forge_ports::TaskQueue>,
        Arc<dyn forge_ports::ShareLinks>,
    )>,
) -> Shared {
    let (queue, shares) = queue.unzip();
    let metrics = Arc::new(PrometheusMetrics::new());
    let mut runtime = compose::runtime();
    runtime.metrics = Arc::clone(&metrics) as Arc<dyn forge_ports::Metrics>;
    Arc::new(ServerState {
        roots,
        token,
        runs: live::RunTable::default(),
        runtime,
        metrics,
        http: Arc::new(HttpStats::default()),
        sink,
        queue,
        shares,
        board_stages: tokio::sync::Mutex::default(),
        board_snapshots: std::sync::Mutex::default(),
    })
}

/// `[server] roots` of the user configuration file, else the current directory.
fn configured_roots() -> Result<Vec<PathBuf>, Failure> {
    let from_file = match user_config_file() {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => roots_in(&text).map_err(|reason| {
                Failure::Usage(format!("file {}: server.roots: {reason}", path.display()))
            })?,
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    if from_file.is_empty() {
        Ok(vec![std::env::current_dir()?])
    } else {
        Ok(from_file)
    }
}

/// The `roots` list of the `[server]` table of a config file's text.
fn roots_in(text: &str) -> Result<Vec<PathBuf>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_owned())?;
    let Some(server) = table.get("server") else {
        return Ok(Vec::new());
    };
    let Some(roots) = server.get("roots") else {
        return Ok(Vec::new());
    };
    let Some(list) = roots.as_array() else {
        return Err("expected an array of directories".into());
    };
    list.iter()
        .map(|v| {
            v.as_str()
                .map(PathBuf::from)
                .ok_or_else(|| "expected an array of directories".to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::roots_in;
    use std::path::PathBuf;

    #[test]
    fn server_roots_come_from_the_server_table() {
        let check = |text: &str, expected: Result<Vec<&str>, ()>| {
            let got = roots_in(text).map_err(drop);
            let expected = expected.map(|v| v.into_iter().map(PathBuf::from).collect::<Vec<_>>());
            assert_eq!(got, expected, "{text}");
        };
        check(
            "[server]\nroots = [\"/srv/a\", \"/srv/b\"]\n",
            Ok(vec!["/srv/a", "/srv/b"]),
        );
        check("[server]\nroots = []\n", Ok(vec![]));
        check("default_provider = \"claude\"\n", Ok(vec![]));
        check("roots = [\"/srv/a\"]\n", Ok(vec![]));
        check("[server]\nroots = \"/srv/a\"\n", Err(()));
        check("[server]\nroots = [1]\n", Err(()));
        check("[server\n", Err(()));
    }
}
