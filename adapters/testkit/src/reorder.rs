//! The decoders read lines in the CLI's own key order through a fast path; the same lines
//! with their keys reordered take the general path. [`assert_paths_agree`] checks both give
//! the same events and the same errors (the adapters' robustness suites).

use forge_domain::ForgeError;
use forge_ports::Decoder;

/// Each JSON line re-serialised with its keys sorted (serde_json's map order), so a kind tag
/// written first no longer is; other lines unchanged.
pub fn keys_sorted(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match serde_json::from_str::<serde_json::Value>(l) {
            Ok(v) => v.to_string(),
            Err(_) => l.clone(),
        })
        .collect()
}

/// Decodes `lines` (numbered from 1) with a fresh decoder: the events as JSON values (raw
/// JSON inside them keeps the line's key order, so they are compared as values) and the
/// line numbers reported as parsing errors.
///
/// # Panics
/// On an error other than `ForgeError::Parsing`, or an event that does not serialise.
#[expect(
    clippy::expect_used,
    reason = "a test helper: a panic is how the calling test fails"
)]
pub fn decode_as_values(
    mut decoder: Box<dyn Decoder>,
    lines: &[String],
) -> (Vec<serde_json::Value>, Vec<u64>) {
    let mut out = Vec::new();
    let errors: Vec<u64> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| decoder.decode_line(i as u64 + 1, l, &mut out).err())
        .map(|e| match e {
            ForgeError::Parsing { line, .. } => line,
            other => panic!("{other:?}"),
        })
        .collect();
    let events = out
        .iter()
        .map(|e| serde_json::to_value(e).expect("events serialise"))
        .collect();
    (events, errors)
}

/// `lines` as written and with [`keys_sorted`] decode to the same events and errors.
///
/// # Panics
/// When they do not (the calling test fails).
pub fn assert_paths_agree(new_decoder: impl Fn() -> Box<dyn Decoder>, lines: &[String]) {
    let (fast, fast_errors) = decode_as_values(new_decoder(), lines);
    let (general, general_errors) = decode_as_values(new_decoder(), &keys_sorted(lines));
    assert_eq!(fast_errors, general_errors);
    assert_eq!(fast.len(), general.len());
    for (a, b) in fast.iter().zip(&general) {
        assert_eq!(a, b);
    }
}
