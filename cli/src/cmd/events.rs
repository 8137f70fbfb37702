//! `events`: decode a recorded transcript offline, through the same decoder and result
//! assembly as a live run, so a drift in a CLI's output shows here first.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use forge_app::decode_transcript;
use forge_app::from_config::apply_request_defaults;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::ProcessExit;

use crate::args::{ConfigFlags, EventsArgs};
use crate::compose;
use crate::config_load::{load_config, workdir};
use crate::exit::Failure;
use crate::output::human::HumanRenderer;
use crate::output::spinner::Spinner;
use crate::output::style::Style;
use crate::output::{Format, write_json_pretty};

/// How much of the recorded stderr is kept, as the process runner keeps a tail.
const STDERR_TAIL_BYTES: usize = 64 * 1024;

pub fn run(args: &EventsArgs) -> Result<u8, Failure> {
    let flags = ConfigFlags {
        provider: Some(args.provider.clone()),
        workdir: args.workdir.clone(),
        ..ConfigFlags::default()
    };
    let config = load_config(&flags)?;
    let registry = compose::registry();
    let provider =
        compose::build_provider(&registry, &args.provider, config.settings(&args.provider))
            .map_err(|e| Failure::Usage(e.to_string()))?;
    let id = ProviderId::new(args.provider.clone()).map_err(|e| Failure::Usage(e.to_string()))?;

    let bytes = std::fs::read(&args.file)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", args.file.display())))?;
    // Invalid UTF-8 is replaced, as a live run's line reader replaces it; valid text (the
    // usual case) is taken as it is, not copied.
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let exit = recorded_exit(&args.file, args.exit_code);

    let mut request = ExecutionRequest::new(id.clone(), "", workdir(&flags));
    apply_request_defaults(&config, &mut request);
    let decoder = provider.decoder(&request);

    let stdout = std::io::stdout();
    let is_tty = stdout.is_terminal();
    // Everything is printed as it is decoded into one buffer, not a write per line (a 40 MB
    // transcript's result is millions of lines), and no event is held longer than its line.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    match Format::from_flags(args.json, args.jsonl) {
        Format::Human => {
            let mut renderer =
                HumanRenderer::new(&mut out, Style::detect(is_tty), Spinner::new(false), true);
            let result = decode_transcript(id, decoder, &text, exit, &mut |event| {
                renderer.event(&event);
            });
            renderer.finish(&result);
        }
        Format::Json => {
            let result = decode_transcript(id, decoder, &text, exit, &mut drop);
            write_json_pretty(&mut out, &result)?;
        }
        Format::Jsonl => {
            let mut failed = None;
            let result = decode_transcript(id, decoder, &text, exit, &mut |event| {
                if failed.is_none() {
                    failed = json_line(&mut out, &event).err();
                }
            });
            if let Some(e) = failed {
                return Err(e.into());
            }
            json_line(&mut out, &result)?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// The exit the recording ended with: `--exit-code`, else `exit_code` of
/// `<name>.meta.json`, with `<name>.stderr.txt` as its stderr. `None` when neither says.
fn recorded_exit(file: &Path, flag: Option<i32>) -> Option<ProcessExit> {
    let sibling = |suffix: &str| -> PathBuf {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
        file.with_file_name(format!("{stem}{suffix}"))
    };
    let meta_code = std::fs::read_to_string(sibling(".meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m.get("exit_code")?.as_i64())
        .and_then(|c| i32::try_from(c).ok());
    let code = flag.or(meta_code)?;
    let stderr = std::fs::read(sibling(".stderr.txt")).unwrap_or_default();
    let tail = &stderr[stderr.len().saturating_sub(STDERR_TAIL_BYTES)..];
    Some(ProcessExit {
        code: Some(code),
        signal: None,
        stderr_tail: String::from_utf8_lossy(tail).into_owned(),
        stderr_bytes: stderr.len() as u64,
    })
}

/// One JSON line, left in the buffer (the command prints everything at once).
fn json_line(out: &mut impl Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}
