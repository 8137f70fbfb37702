//! `runs list` and `runs show`: reading the artifact bundles through the ArtifactStore port.

use std::io::{IsTerminal, Write};

use forge_domain::RunId;
use serde_json::json;

use super::time::{local, local_zone};
use crate::args::RunsCommand;
use crate::compose;
use crate::exit::Failure;
use crate::output::footer::{self, duration};
use crate::output::human::HumanRenderer;
use crate::output::spinner::Spinner;
use crate::output::style::Style;
use crate::output::{write_json_line, write_json_pretty};

pub async fn run(command: RunsCommand) -> Result<u8, Failure> {
    let artifacts = compose::runtime().artifacts;
    let stdout = std::io::stdout();
    let style = Style::detect(stdout.is_terminal());
    let mut out = stdout.lock();
    match command {
        RunsCommand::List { workdir, json } => {
            let runs = artifacts
                .list_runs(&workdir)
                .await
                .map_err(|e| Failure::Other(e.into()))?;
            if json {
                write_json_pretty(&mut out, &runs)?;
                return Ok(0);
            }
            if runs.is_empty() {
                writeln!(
                    out,
                    "no runs under {}",
                    workdir.join(".forgecode/runs").display()
                )?;
                return Ok(0);
            }
            writeln!(
                out,
                "{}",
                style.bold(format!(
                    "{:<38} {:<19} {:<8} {:<8} {:>8} {:>9}",
                    "RUN",
                    format!("STARTED ({})", local_zone()),
                    "PROVIDER",
                    "STATUS",
                    "DURATION",
                    "COST"
                ))
            )?;
            for run in runs {
                let r = &run.record;
                let status = match (r.status, run.has_result) {
                    (Some(s), _) => serde_json::to_value(s)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    (None, false) => "running?".into(),
                    (None, true) => "unknown".into(),
                };
                writeln!(
                    out,
                    "{:<38} {:<19} {:<8} {:<8} {:>8} {:>9}",
                    r.run_id.as_str(),
                    local(r.started_at_ms),
                    r.provider.as_str(),
                    status,
                    run.duration_ms.map(duration).unwrap_or_else(|| "-".into()),
                    run.cost_usd
                        .map(|c| format!("${c:.4}"))
                        .unwrap_or_else(|| "-".into()),
                )?;
            }
            Ok(0)
        }
        RunsCommand::Show {
            id,
            workdir,
            events,
            json,
        } => {
            let run_id = RunId::new(id).map_err(|e| Failure::Usage(e.to_string()))?;
            let result = artifacts
                .load_result(&workdir, &run_id)
                .await
                .map_err(|e| Failure::Usage(e.to_string()))?;
            let event_list = if events {
                artifacts
                    .load_events(&workdir, &run_id)
                    .await
                    .map_err(|e| Failure::Other(e.into()))?
            } else {
                Vec::new()
            };
            if json {
                if events {
                    write_json_pretty(&mut out, &json!({"result": result, "events": event_list}))?;
                } else {
                    write_json_pretty(&mut out, &result)?;
                }
                return Ok(0);
            }
            match result {
                Some(result) => {
                    if events {
                        let mut renderer =
                            HumanRenderer::new(&mut out, style, Spinner::new(false), true);
                        for event in &event_list {
                            renderer.event(event);
                        }
                        renderer.finish(&result);
                    } else {
                        if !result.content.is_empty() {
                            writeln!(out, "{}", result.content.trim_end())?;
                        }
                        for line in footer::render(style, &result) {
                            writeln!(out, "{line}")?;
                        }
                    }
                }
                None => {
                    writeln!(
                        out,
                        "run {run_id} has no result (still running, or forge died)"
                    )?;
                    for event in &event_list {
                        write_json_line(&mut out, event)?;
                    }
                }
            }
            Ok(0)
        }
    }
}
