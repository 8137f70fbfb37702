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
