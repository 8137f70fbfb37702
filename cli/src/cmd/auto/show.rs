//! `auto status` and `auto report`: read what a loop saved, without running anything.

use std::io::Write;

use forge_adapter_fs::{FsLoopStore, STATE_FILE};
use forge_domain::autoloop::{LoopReport, LoopState, render_markdown};

use super::ShowArgs;
use crate::args::ConfigFlags;
use crate::config_load::workdir;
use crate::exit::Failure;
use crate::output::write_json_pretty;

fn load(args: &ShowArgs) -> Result<(FsLoopStore, LoopState), Failure> {
    let flags = ConfigFlags {
        workdir: args.workdir.clone(),
        ..ConfigFlags::default()
    };
    let store = FsLoopStore::for_workdir(&workdir(&flags));
    let path = store.dir().join(STATE_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::Usage(format!("no loop state at {}: {e}", path.display())))?;
    let state = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
    Ok((store, state))
}

pub fn status(args: &ShowArgs) -> Result<u8, Failure> {
    let (store, state) = load(args)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        write_json_pretty(&mut out, &state)?;
        return Ok(0);
    }
    let step = state.step.as_ref().map_or_else(
        || "none (between iterations)".to_owned(),
        |s| format!("iteration {}, {}", s.iteration, s.phase.name()),
    );
    let stopped = state.stopped.as_ref().map_or_else(
        || "no".to_owned(),
        |s| {
            format!(
                "{}{}",
                s.reason,
                s.during
                    .as_ref()
                    .map(|d| format!(" (during {d})"))
                    .unwrap_or_default()
            )
        },
    );
    writeln!(out, "loop:        {}", store.dir().display())?;
    writeln!(out, "goal:        {}", state.goal)?;
    writeln!(out, "iteration:   {}", state.iteration)?;
    writeln!(out, "step:        {step}")?;
    writeln!(out, "persona:     {}", state.persona)?;
    writeln!(
        out,
        "errors:      {} in a row, {} in all",
        state.consecutive_errors, state.total_errors
    )?;
    writeln!(out, "cost:        ${:.4}", state.total_cost_usd)?;
    writeln!(
        out,
        "research:    {} hits, {} misses",
        state.research_hits, state.research_misses
    )?;
    writeln!(out, "stopped:     {stopped}")?;
    Ok(0)
}

/// The report rebuilt from the saved state (the same as `report.md` once the loop stopped;
/// for a loop still running or crashed, where it stands).
pub fn report(args: &ShowArgs) -> Result<u8, Failure> {
    let (_, state) = load(args)?;
    let report = LoopReport::from_state(&state, &state.provider);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        write_json_pretty(&mut out, &report)?;
    } else {
        out.write_all(render_markdown(&report).as_bytes())?;
    }
    Ok(0)
}
