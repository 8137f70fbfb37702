//! Property-test pieces shared by the provider adapters: random JSON shaped like a CLI's
//! events (known kinds and keys, values of any type), cut lines, and the check that a
//! decoder reports each line's [`LineShape`] truthfully.

use forge_domain::RawJson;
use forge_ports::{Decoder, LineShape};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value};

/// Any JSON value: scalars of every type (strings random or picked from `strings`, the
/// values a decoder branches on), nested arrays and objects whose keys come from `keys`.
pub fn json_value(
    keys: &'static [&'static str],
    strings: &'static [&'static str],
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(strings).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            fields(keys, inner, 8).prop_map(Value::Object),
        ]
    })
}

/// Up to `max - 1` fields named from `keys`, with values from `values`.
pub fn fields(
    keys: &'static [&'static str],
    values: impl Strategy<Value = Value>,
    max: usize,
) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(keys), values), 0..max)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// An object shaped like an event: `type` one of `kinds`, plus random fields from `keys`.
pub fn event_like(
    kinds: &'static [&'static str],
    keys: &'static [&'static str],
    strings: &'static [&'static str],
) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(kinds),
        fields(keys, json_value(keys, strings), 10),
    )
        .prop_map(|(kind, mut map)| {
            map.insert("type".into(), Value::from(kind));
            Value::Object(map)
        })
}

/// Random byte chunks as lines (invalid UTF-8 replaced, as a line reader would).
pub fn byte_lines(max_len: usize, max_lines: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..max_len), 0..max_lines).prop_map(
        |chunks| {
            chunks
                .iter()
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect()
        },
    )
}

/// `line` cut after at most `at` bytes, on a character boundary: a truncated write.
pub fn cut(line: &str, at: usize) -> String {
    let mut end = at.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

/// Feeds `lines` to `decoder` and checks each reported shape against the runtime's own slow
/// check ([`RawJson::from_line`]): a decoder that says `Json` for a line that is not, or
/// `Text` for one that is, would make the bundle keep the line differently.
///
/// # Errors
/// A failed case, naming the line.
pub fn check_line_shapes(decoder: &mut dyn Decoder, lines: &[String]) -> Result<(), TestCaseError> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Ok(shape) = decoder.decode_line(i as u64 + 1, line, &mut out) else {
            continue;
        };
        let want = if line.trim().is_empty() {
            None
        } else {
            Some(RawJson::from_line(line))
        };
        prop_assert_eq!(shape.raw_line(line), want, "{:?} said {:?}", line, shape);
        prop_assert_eq!(shape, LineShape::classify(line), "{:?}", line);
    }
    Ok(())
}

/// Bytes a mutation writes: JSON's structural and escape characters, digits, the letters of
/// `true`/`false`/`null`, whitespace and control characters.
pub const MUTATION_BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtrufalsn \t\r\nu/bx\x01\x1f";

/// `text` with 0–3 byte edits (removals, replacements, insertions of [`MUTATION_BYTES`]),
/// invalid UTF-8 replaced: near-valid JSON lines of every kind of breakage.
pub fn mutated_text(text: &str, edits: &[(prop::sample::Index, usize, u8)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for (at, pick, op) in edits {
        let at = at.index(bytes.len() + 1);
        let byte = MUTATION_BYTES[pick % MUTATION_BYTES.len()];
        match op {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = byte,
            _ => bytes.insert(at, byte),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Up to three edits for [`mutated_text`].
pub fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, u8)>> {
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0..MUTATION_BYTES.len(),
            0u8..3,
        ),
        0..4,
    )
}

/// One of `runs` (non-empty ones) with one of its lines mutated by `edits`.
pub fn mutated_run(
    runs: &[Vec<String>],
    pick: prop::sample::Index,
    edits: &[(prop::sample::Index, usize, u8)],
) -> Vec<String> {
    let mut run = pick.get(runs).clone();
    if !run.is_empty() {
        let at = pick.index(run.len());
        run[at] = mutated_text(&run[at], edits);
    }
    run
}

/// What a decoder makes of a run: its events, each line's shape (or error) as text, and
/// the result pieces. Two decoders that agree on this agree on everything a run reports.
pub type DecodedRun = (
    Vec<forge_domain::AgentEvent>,
    Vec<String>,
    forge_ports::ResultPieces,
);

/// Decodes `lines` as the runtime does, then finishes without an exit.
pub fn decode_run(decoder: &mut dyn Decoder, lines: &[String]) -> DecodedRun {
    let mut events = Vec::new();
    let shapes = lines
        .iter()
        .enumerate()
        .map(|(i, line)| format!("{:?}", decoder.decode_line(i as u64 + 1, line, &mut events)))
        .collect();
    (events, shapes, decoder.finish(None))
}

/// The recorded runs of `provider` (testkit fixtures), a line list each, empty ones left out.
pub fn fixture_runs(provider: &str) -> Vec<Vec<String>> {
    crate::fixtures::transcripts(provider)
        .iter()
        .map(|t| t.stdout.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|run| !run.is_empty())
        .collect()
}
