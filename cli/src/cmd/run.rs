//! `run` and `stream`: one request through the configured agent, Ctrl-C aware.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use forge_adapter_sink::HttpEventSink;
use forge_ports::EventSink;

use forge_app::CodeAgent;
use forge_app::from_config::apply_request_defaults;
use forge_domain::{
    AgentEvent, ExecutionMode, ExecutionRequest, ExecutionResult, PermissionMode, SessionId,
};

use crate::args::{RunArgs, RunPermissionArg};
use crate::cmd::run_prompt::Prompter;
use crate::compose;
use crate::config_load::{load_config, workdir};
use crate::exit::{Failure, exit_code_of};
use crate::output::human::HumanRenderer;
use crate::output::spinner::Spinner;
use crate::output::style::Style;
use crate::output::{Format, write_json_line, write_json_pretty};
use crate::prompt::read_prompt;
use crate::signals;

/// `live`: print events as they arrive (`stream`); else a summary at the end (`run`).
pub async fn run(args: RunArgs, live: bool) -> Result<u8, Failure> {
    let format = Format::from_flags(args.json, args.jsonl);
    let prompt = read_prompt(args.prompt.as_deref())?;
    let config = load_config(&args.config)?;
    let sink = match &args.event_sink {
        Some(url) => Some(compose::event_sink(url).map_err(Failure::Usage)?),
        None => None,
    };
    let mut builder = compose::configured_agent(&config, &args.config)
        .await?
        .tool_host(compose::tool_host());
    if let Some(sink) = &sink {
        builder = builder.event_sink(Arc::clone(sink) as Arc<dyn EventSink>);
    }
    // `ask`: the requests go to the workdir's store, where this terminal and anyone with
    // `permissions allow|deny` answer them.
    let bridge = match args.permission_mode {
        Some(RunPermissionArg::Ask) => Some(crate::permissions::bridge(&workdir(&args.config))?),
        _ => None,
    };
    if let Some(bridge) = &bridge {
        builder = builder.permissions(bridge.clone());
    }
    let agent = builder.build().map_err(|e| Failure::Usage(e.to_string()))?;

    agent.end_orphans_of_finished_runs().await;

    let mut request = agent.request(prompt);
    request.workdir = workdir(&args.config);
    apply_request_defaults(&config, &mut request);
    request.permission_mode = args.permission_mode.map(Into::into);
    refuse_unaskable(&agent, &request)?;
    request.resume_session_id = args
        .resume
        .map(SessionId::new)
        .transpose()
        .map_err(|e| Failure::Usage(format!("--resume: {e}")))?;
    request.allowed_tools = args.allowed_tools;
    request.disallowed_tools = args.disallowed_tools;
    request.append_system_prompt = args.append_system_prompt;

    request.mode = if live {
        ExecutionMode::Stream
    } else {
        ExecutionMode::Run
    };
    let mut handle = agent.start(request);
    let watcher = signals::watch(handle.canceller(), false)?;
    let stdout = std::io::stdout();
    let is_tty = stdout.is_terminal();
    let mut out = stdout.lock();

    let result = match format {
        Format::Human => {
            let spinner = Spinner::new(is_tty && std::io::stderr().is_terminal());
            let mut renderer = HumanRenderer::new(&mut out, Style::detect(is_tty), spinner, live);
            let prompter = bridge
                .as_ref()
                .filter(|_| std::io::stdin().is_terminal())
                .map(|b| Prompter::new(Arc::clone(&b.store)));
            while let Some(event) = handle.next_event().await {
                renderer.event(&event);
                if let (Some(prompter), AgentEvent::PermissionRequested { request }) =
                    (&prompter, &event)
                    && request.is_pending()
                {
                    prompter.ask(request);
                }
            }
            let result = handle.result().await;
            renderer.finish(&result);
            result
        }
        Format::Jsonl => {
            let mut writable = true;
            while let Some(event) = handle.next_event().await {
                writable = writable && write_event(&mut out, &event);
            }
            let result = handle.result().await;
            if writable {
                let _ = write_json_line(&mut out, &result);
            }
            result
        }
        Format::Json => {
            // Nothing is shown before the result: the event stream is closed at once, so no
            // event waits in it holding a text the run has moved on from.
            let result = handle.result().await;
            print_result(&mut out, &result);
            result
        }
    };
    watcher.abort();
    if let Some(sink) = sink {
        flush(&sink).await;
    }
    Ok(exit_code_of(&result))
}

/// `--permission-mode ask` with a provider that cannot ask through forge: a usage error
/// (exit 2) saying why and what to use instead, before anything starts.
pub(crate) fn refuse_unaskable(
    agent: &CodeAgent,
    request: &ExecutionRequest,
) -> Result<(), Failure> {
    if request.permission_mode != Some(PermissionMode::Ask) {
        return Ok(());
    }
    let provider = agent
        .provider(&request.provider)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    if provider
        .capabilities()
        .permission_modes
        .contains(&PermissionMode::Ask)
    {
        return Ok(());
    }
    let id = provider.id();
    Err(Failure::Usage(
        forge_domain::permission::ask_refusal(id.as_str()).unwrap_or_else(|| {
            format!("--permission-mode ask: provider {id} cannot ask through forge yet")
        }),
    ))
}

/// The result is out; events the sink still holds get a short while to leave before the
/// process ends (a sink that is down or slow costs at most this, after the run).
async fn flush(sink: &HttpEventSink) {
    let deadline = tokio::time::Instant::now() + SINK_FLUSH;
    while sink.totals().pending > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

const SINK_FLUSH: std::time::Duration = std::time::Duration::from_secs(1);

/// False once stdout is gone (`| head`): the run goes on, output stops.
fn write_event(out: &mut dyn Write, event: &AgentEvent) -> bool {
    write_json_line(out, event).is_ok()
}

fn print_result(out: &mut dyn Write, result: &ExecutionResult) {
    let _ = write_json_pretty(out, result);
}
