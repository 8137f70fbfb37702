//! Per-line work of the pump: keep the raw line, decode it, record parse errors.

use std::sync::Arc;

use forge_domain::{AgentEvent, ForgeError, ProviderId, RawJson};
use forge_ports::{Decoder, Metrics, StdoutItem};

/// Most stdout lines decoded before the events are delivered (bounds latency and memory).
pub(super) const MAX_BURST_LINES: usize = 512;

/// Most stdout bytes decoded before the events are delivered: a huge line's events go out
/// (and are dropped) before the next line is decoded, so a text that more text joins is
/// moved, not copied, while its event still holds it.
pub(super) const MAX_BURST_BYTES: usize = 1024 * 1024;

/// The decoder and what it has produced so far.
pub(super) struct Decoding {
    pub decoder: Box<dyn Decoder>,
    pub raw_events: Vec<RawJson>,
    pub runtime_errors: Vec<ForgeError>,
    /// Events decoded and not delivered yet.
    pub batch: Vec<AgentEvent>,
    pub max_line_bytes: usize,
    pub provider: ProviderId,
    pub metrics: Arc<dyn Metrics>,
    /// Bytes of the lines taken since the last delivery.
    pub burst_bytes: usize,
}

impl Decoding {
    /// Handles one stdout item; false when the stream has ended.
    pub fn take(&mut self, item: Result<Option<StdoutItem>, ForgeError>) -> bool {
        match item {
            Ok(Some(StdoutItem::Line { line_no, text })) => {
                self.burst_bytes += text.len();
                // The decoder says whether the line was blank (kept nowhere) or one JSON
                // document (kept without a second syntax pass). Its shape is unknown only after an error.
                match self.decoder.decode_line(line_no, &text, &mut self.batch) {
                    // The line itself is moved into the result: a huge line lives once
                    // beside its decoded text, never twice.
                    Ok(shape) => self.raw_events.extend(shape.raw_line_owned(text)),
                    Err(e) => {
                        self.raw_events.push(RawJson::from_line(&text));
                        self.metrics.parse_error(&self.provider);
                        self.runtime_errors.push(e);
                    }
                }
                true
            }
            Ok(Some(StdoutItem::Oversize {
                line_no,
                size_bytes,
                prefix,
            })) => {
                let cap = self.max_line_bytes;
                self.raw_events.push(RawJson::string(&format!(
                    "<line {line_no} of {size_bytes} bytes skipped: over the {cap} byte cap; full text in stdout.log>"
                )));
                self.runtime_errors.push(ForgeError::parsing(
                    line_no,
                    &prefix,
                    format!("line of {size_bytes} bytes is over the {cap} byte cap"),
                ));
                self.metrics.parse_error(&self.provider);
                self.batch
                    .push(AgentEvent::OversizeLine { size_bytes, prefix });
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.runtime_errors.push(e);
                false
            }
        }
    }
}
