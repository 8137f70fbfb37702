//! How results and events reach the user: JSON for programs, text for people.

pub mod footer;
pub mod human;
pub mod permission_line;
pub mod spinner;
pub mod style;
pub mod tool_line;

use std::io::Write;

use serde::Serialize;

/// The output format a command was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The result as pretty JSON.
    Json,
    /// Events as JSON lines, then the result as the last line.
    Jsonl,
    /// Text for people.
    Human,
}

impl Format {
    pub fn from_flags(json: bool, jsonl: bool) -> Self {
        if json {
            Format::Json
        } else if jsonl {
            Format::Jsonl
        } else {
            Format::Human
        }
    }
}

/// Writes `value` as pretty JSON and a newline.
///
/// # Errors
/// The I/O error of the writer.
pub fn write_json_pretty(out: &mut dyn Write, value: &impl Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// Writes `value` as one JSON line and flushes, so a reader sees it at once.
///
/// # Errors
/// The I/O error of the writer.
pub fn write_json_line(out: &mut dyn Write, value: &impl Serialize) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)?;
    out.flush()
}
