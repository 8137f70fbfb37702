//! `auto --config auto.yaml`: health check, then the loop to a stop, then the report.

use std::io::Write;
use std::sync::Arc;

use forge_adapter_fs::{FsLoopStore, StopFile};
use forge_app::AutoLoop;
use forge_app::autoloop::RequestShaper;
use forge_app::from_config::apply_request_defaults;
use forge_domain::autoloop::{StopReason, render_markdown};
use forge_domain::{ForgeError, PermissionMode};
use forge_ports::LoopStore;

use super::AutoArgs;
use crate::args::ConfigFlags;
use crate::compose;
use crate::config_load::{load_config, workdir};
use crate::exit::Failure;
use crate::output::write_json_pretty;

pub async fn run(args: AutoArgs) -> Result<u8, Failure> {
    let names = compose::provider_names(&compose::registry());
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let auto =
        super::config::load(&args.config, &known).map_err(|e| Failure::Usage(e.to_string()))?;
    let flags = ConfigFlags {
        provider: Some(auto.provider.clone()),
        workdir: args.workdir.clone(),
        ..ConfigFlags::default()
    };
    let config = load_config(&flags)?;
    let workdir = workdir(&flags);

    let mut providers = vec![auto.provider.as_str()];
    if auto.research.enabled && auto.research_provider() != auto.provider {
        providers.push(auto.research_provider());
    }
    if let Some(problems) = super::health::check(&config, &providers).await? {
        let _ = writeln!(std::io::stderr(), "error: health check failed\n{problems}");
        return Ok(1);
    }

    let agent = compose::configured_agent(&config, &flags)
        .await?
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let permission: Option<PermissionMode> = args.permission_mode.map(Into::into);
    let shaper_config = config.clone();
    let shaper: RequestShaper = Arc::new(move |request| {
        apply_request_defaults(&shaper_config, request);
        if permission.is_some() {
            request.permission_mode = permission;
        }
    });
    let store = FsLoopStore::for_workdir(&workdir);
    let stop = StopFile::new(&workdir, &auto.safety.emergency_stop_file);
    let stop_path = stop.path().display().to_string();
    // Human mode narrates each event on stderr; --json keeps stderr for errors.
    let loop_store: Arc<dyn LoopStore> = if args.json {
        Arc::new(store.clone())
    } else {
        Arc::new(super::progress::Progress {
            inner: store.clone(),
        })
    };
    let looper = AutoLoop::new(agent, auto, workdir, loop_store, Arc::new(stop))
        .with_shaper(shaper)
        .with_mapper(Arc::new(forge_adapter_repomap::TreeSitterMapper::new(
            Some(crate::cmd::task::execute::context_cache_dir()),
        )));
    tracing::info!(dir = %store.dir().display(), stop_file = %stop_path, "auto loop starting");
    let outcome = looper.run(args.resume).await.map_err(|e| match e {
        // Nothing to resume, or an unfinished loop in the way: the caller's to fix.
        ForgeError::InvalidRequest { reason } => Failure::Usage(reason),
        other => Failure::Other(anyhow::Error::new(other).context("the loop's state")),
    })?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        write_json_pretty(&mut out, &outcome.report)?;
    } else {
        let _ = out.write_all(render_markdown(&outcome.report).as_bytes());
        let _ = writeln!(out, "\nState and report: {}", store.dir().display());
    }
    Ok(exit_code(outcome.reason))
}

fn exit_code(reason: StopReason) -> u8 {
    match reason {
        StopReason::Completed => 0,
        StopReason::TooManyErrors => 1,
        StopReason::MaxIterations
        | StopReason::Timeout
        | StopReason::CostCeiling
        | StopReason::EmergencyStop => 3,
    }
}
