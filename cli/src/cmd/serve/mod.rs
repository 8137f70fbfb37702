//! `serve`: composes forge-server over the real adapters and starts it. The server is a
//! driving adapter of its own (the `server/` crate); this command reads its flags and the
//! user config, opens the queue and hands the server what it needs ([`CliComposition`]).

mod composition;
mod roots;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use forge_adapter_telemetry::PrometheusMetrics;
use forge_server::{Roots, ServerParts, ServerState};

use crate::compose;
use crate::exit::Failure;
use composition::CliComposition;

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
    #[arg(long, value_name = "URL", env = super::queue::QUEUE_ENV)]
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
        roots::configured()?
    } else {
        args.roots
    };
    let roots = Roots::new(&roots).map_err(|e| Failure::Usage(e.to_string()))?;
    let sink = match &args.event_sink {
        Some(url) => Some(compose::event_sink(url).map_err(Failure::Usage)? as _),
        None => None,
    };
    let queue_url = super::queue::queue_url(args.queue.as_deref())?;
    let queue = match &queue_url {
        Some(url) => Some(super::queue::open_with_shares(url).await?),
        None => None,
    };
    // The agents' permission requests: the queue's, so its tasks' are answered here too;
    // else those of the runs of the directory serve runs in.
    let permissions: Arc<dyn forge_ports::PermissionRequests> = match &queue_url {
        Some(url) => crate::permissions::queue_store(url).await?,
        None => crate::permissions::local_store(&std::env::current_dir()?)?,
    };
    let _sweep = crate::permissions::sweep(Arc::clone(&permissions));
    // Webhooks become queued follow-ups: only with a queue.
    let feedback = match (&queue_url, &queue) {
        (Some(url), Some((queue, _))) => super::forge::feedback(url, Arc::clone(queue)).await?,
        _ => None,
    };
    // The real runtime with Prometheus metrics in place of the no-op ones.
    let metrics = Arc::new(PrometheusMetrics::new());
    let mut runtime = compose::runtime();
    runtime.metrics = Arc::clone(&metrics) as Arc<dyn forge_ports::Metrics>;
    let state = ServerState::new(ServerParts {
        roots,
        token,
        runtime,
        composition: Arc::new(CliComposition {
            metrics,
            permissions,
            feedback,
        }),
        sink,
        queue,
    });
    forge_server::serve(args.addr, state).await?;
    Ok(0)
}
