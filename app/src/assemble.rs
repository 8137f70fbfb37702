//! Turning what a run produced into its [`ExecutionResult`]. Live runs and offline decoding of
//! a recorded transcript go through the same function, so both give the same result.

use forge_domain::{
    AgentEvent, ExecutionResult, ExecutionStatus, ForgeError, ProviderId, RawJson, RunId,
    StatusInputs, derive_status,
};
use forge_ports::{Decoder, ProcessExit, ResultPieces};

/// At most this many parsing errors are kept one by one; the rest are counted.
pub const MAX_PARSE_ERRORS: usize = 100;

/// What the runtime knows besides the provider's [`ResultPieces`].
pub struct AssembleInputs {
    pub provider: ProviderId,
    pub run_id: Option<RunId>,
    pub workdir: Option<String>,
    pub raw_events: Vec<RawJson>,
    /// Errors met while running (parsing, I/O), in order.
    pub runtime_errors: Vec<ForgeError>,
    pub exit: Option<ProcessExit>,
    pub cancelled: bool,
    /// The deadline that passed, when the run timed out.
    pub timed_out_after_ms: Option<u64>,
    /// forge's own wall-clock duration of the run.
    pub duration_ms: Option<u64>,
}

/// Merges the provider's pieces with the runtime's facts and derives the status.
pub fn assemble_result(pieces: ResultPieces, inputs: AssembleInputs) -> ExecutionResult {
    let exit_code = inputs.exit.as_ref().and_then(|e| e.code);
    let status = derive_status(StatusInputs {
        reported_success: pieces.reported_success,
        exit_code,
        saw_output: !inputs.raw_events.is_empty(),
        cancelled: inputs.cancelled,
        timed_out: inputs.timed_out_after_ms.is_some(),
    });

    let mut errors = pieces.errors;
    errors.extend(cap_parse_errors(inputs.runtime_errors));
    if let Some(after_ms) = inputs.timed_out_after_ms {
        errors.push(ForgeError::ProviderTimeout { after_ms });
    }
    if inputs.cancelled {
        errors.push(ForgeError::Cancelled);
    }
    // Every result that is not a success says why, in at least one error.
    if status != ExecutionStatus::Success && errors.is_empty() {
        errors.push(unexplained(pieces.reported_success, inputs.exit.as_ref()));
    }

    let mut metadata = pieces.metadata;
    metadata.run_id = inputs.run_id;
    metadata.exit_code = exit_code;
    if inputs.workdir.is_some() {
        metadata.workdir = inputs.workdir;
    }
    if inputs.duration_ms.is_some() {
        metadata.duration_ms = inputs.duration_ms;
    }
    if inputs.cancelled {
        metadata.stop_reason = Some("cancelled".to_owned());
    } else if inputs.timed_out_after_ms.is_some() {
        metadata.stop_reason = Some("timeout".to_owned());
    }

    ExecutionResult {
        status,
        provider: inputs.provider,
        content: pieces.content,
        raw_events: inputs.raw_events,
        tool_calls: pieces.tool_calls,
        errors,
        metadata,
    }
}

/// The error of a non-success that neither the provider nor the runtime explained: no
/// end-of-run report (the CLI was cut off), or a failure it reported without a reason.
fn unexplained(reported_success: Option<bool>, exit: Option<&ProcessExit>) -> ForgeError {
    let exit_code = exit.and_then(|e| e.code);
    let tail = exit
        .map(|e| e.stderr_tail.trim())
        .and_then(|t| t.lines().rev().find(|l| !l.trim().is_empty()))
        .map(|l| forge_domain::error::excerpt(l.trim(), 300));
    let mut what = match reported_success {
        None => "the CLI's output ended without its end-of-run report (cut off, killed or crashed)",
        Some(false) => "the CLI reported a failure without saying why",
        Some(true) => "the CLI reported success but exited with a failing code",
    }
    .to_owned();
    if let Some(signal) = exit.and_then(|e| e.signal) {
        what.push_str(&format!("; it died of signal {signal}"));
    }
    if let Some(tail) = tail {
        what.push_str(&format!("; stderr ends: {tail}"));
    }
    ForgeError::ProviderExecution {
        exit_code,
        stderr_summary: what,
        hint: None,
    }
}

fn cap_parse_errors(errors: Vec<ForgeError>) -> Vec<ForgeError> {
    let parse_count = errors
        .iter()
        .filter(|e| matches!(e, ForgeError::Parsing { .. }))
        .count();
    if parse_count <= MAX_PARSE_ERRORS {
        return errors;
    }
    let mut kept = 0;
    let mut out: Vec<ForgeError> = errors
        .into_iter()
        .filter(|e| {
            if matches!(e, ForgeError::Parsing { .. }) {
                kept += 1;
                kept <= MAX_PARSE_ERRORS
            } else {
                true
            }
        })
        .collect();
    out.push(ForgeError::Parsing {
        line: 0,
        excerpt: String::new(),
        reason: format!(
            "{} more lines could not be parsed",
            parse_count - MAX_PARSE_ERRORS
        ),
    });
    out
}

/// Decodes a recorded transcript (the CLI's stdout) offline: the result the live run would
/// have produced, given the exit code it recorded, with each event handed to `on_event` as
/// it is decoded (as a live run hands them on), so none need be held. JSONL is read line by
/// line exactly as the runtime reads a live stdout (each line's shape from the decoder, no
/// second syntax pass for the raw lines); a single-document form (`--output-format json`)
/// is decoded whole.
pub fn decode_transcript(
    provider: ProviderId,
    mut decoder: Box<dyn Decoder>,
    stdout: &str,
    exit: Option<ProcessExit>,
    on_event: &mut dyn FnMut(AgentEvent),
) -> ExecutionResult {
    let mut batch = Vec::new();
    let mut raw_events = Vec::new();
    let runtime_errors = match decoder.decode_single_document(stdout, &mut batch) {
        Some(errors) => {
            raw_events.extend(
                stdout
                    .lines()
                    .map(|l| l.strip_suffix('\r').unwrap_or(l))
                    .filter(|l| !l.trim().is_empty())
                    .map(RawJson::from_line),
            );
            batch.drain(..).for_each(&mut *on_event);
            errors
        }
        None => {
            let mut errors = Vec::new();
            for (i, line) in stdout.lines().enumerate() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if line.trim().is_empty() {
                    continue;
                }
                match decoder.decode_line(i as u64 + 1, line, &mut batch) {
                    Ok(shape) => raw_events.extend(shape.raw_line(line)),
                    Err(e) => {
                        raw_events.push(RawJson::from_line(line));
                        errors.push(e);
                    }
                }
                batch.drain(..).for_each(&mut *on_event);
            }
            errors
        }
    };
    if let Some(exit) = &exit {
        decoder.decode_stderr(&exit.stderr_tail, &mut batch);
        batch.drain(..).for_each(&mut *on_event);
    }
    let pieces = decoder.finish(exit.as_ref());
    assemble_result(
        pieces,
        AssembleInputs {
            provider,
            run_id: None,
            workdir: None,
            raw_events,
            runtime_errors,
            exit,
            cancelled: false,
            timed_out_after_ms: None,
            duration_ms: None,
        },
    )
}
