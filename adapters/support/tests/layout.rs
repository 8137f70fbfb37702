//! The layout cursor against `serde_json`: a line the cursor walks to its end is valid JSON
//! with exactly the values the cursor read, however the line was mutated.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on a broken fixture"
)]

use forge_adapter_support::layout::Cursor;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The layout the walker below reads, as `serde_json` reads it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sample<'a> {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    n: Option<i64>,
    #[serde(borrow)]
    v: &'a RawValue,
    ok: bool,
    text: String,
}

/// What a decoder would read with the cursor.
#[derive(Debug, PartialEq)]
struct Read {
    kind: String,
    id: String,
    n: Option<i64>,
    v: String,
    ok: bool,
    text: String,
}

fn walk(line: &str) -> Option<Read> {
    let mut c = Cursor::new(line);
    c.expect(br#"{"type":"#)?;
    let kind = c.string()?.text()?.into_owned();
    c.expect(br#","id":"#)?;
    let id = c.string()?.text()?.into_owned();
    c.expect(br#","n":"#)?;
    let n = c.int_or_null()?;
    c.expect(br#","v":"#)?;
    let v = c.raw()?.to_owned();
    c.expect(br#","ok":"#)?;
    let ok = c.bool()?;
    c.expect(br#","text":"#)?;
    // Read in one pass, where the other strings are checked first and decoded after.
    let text = c.string_text()?.into_owned();
    c.expect(b"}")?;
    c.end()?;
    Some(Read {
        kind,
        id,
        n,
        v,
        ok,
        text,
    })
}

fn by_serde(line: &str) -> Option<Read> {
    let s: Sample<'_> = serde_json::from_str(line).ok()?;
    Some(Read {
        kind: s.kind,
        id: s.id,
        n: s.n,
        v: s.v.get().to_owned(),
        ok: s.ok,
        text: s.text,
    })
}

const SEEDS: &[&str] = &[
    r#"{"type":"item.completed","id":"item_1","n":0,"v":{"a":[1,2.5,"x"]},"ok":true,"text":"line\none \"q\" \u00e9"}"#,
    r#"{"type":"tool_use","id":"t\\1","n":null,"v":"s","ok":false,"text":""}"#,
    r#"{"type":"x","id":"1","n":1,"v":[],"ok":true,"text":"1\n2\n3\n\t\"\\\/\b\f\r\u0041\ud83d\ude80 300\n"}"#,
    r#"{"type":"x","id":"","n":-42,"v":[],"ok":true,"text":"\ud83d\ude00 \/"}"#,
    // Strings past the cursor's short-string scan (64 bytes), escapes on either side of it.
    r#"{"type":"item.completed with a long kind that goes on past sixty-four bytes","id":"a\tb","n":7,"v":null,"ok":false,"text":"test suite::ok ... ok\ntest suite::ok ... ok\ntest suite::ok ... ok\ntest suite::ok ... ok\n\u00e9 done"}"#,
];

/// Bytes a mutation writes: JSON's structural and escape characters among others.
const BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtrufalsn \t\r\nu/bx\x01\x1f";

fn mutated() -> impl Strategy<Value = String> {
    mutated_from(SEEDS)
}

#[test]
fn the_seed_lines_walk_to_the_end() {
    for seed in SEEDS {
        let walked = walk(seed);
        assert!(walked.is_some(), "{seed}");
        assert_eq!(walked, by_serde(seed), "{seed}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16384))]

    #[test]
    fn whatever_the_cursor_reads_serde_json_reads_alike(line in mutated()) {
        if let Some(walked) = walk(&line) {
            prop_assert_eq!(Some(walked), by_serde(&line), "{}", line);
        }
    }
}

/// The same fields read member by member, in any order, others skipped; a repeated field
/// refused (as serde refuses it).
fn walk_any_order(line: &str) -> Option<Read> {
    let mut c = Cursor::new(line);
    let (mut kind, mut id, mut n, mut v, mut ok, mut text) = (None, None, None, None, None, None);
    fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
        if slot.is_some() {
            return None;
        }
        *slot = Some(value?);
        Some(())
    }
    c.object(|key, c| match key.plain()? {
        "type" => once(&mut kind, c.string()?.text().map(|t| t.into_owned())),
        "id" => once(&mut id, c.string()?.text().map(|t| t.into_owned())),
        "n" => once(&mut n, c.int_or_null()),
        "v" => once(&mut v, c.raw().map(str::to_owned)),
        "ok" => once(&mut ok, c.bool()),
        "text" => once(&mut text, c.string_text().map(|t| t.into_owned())),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(Read {
        kind: kind?,
        id: id?,
        n: n?,
        v: v?,
        ok: ok?,
        text: text?,
    })
}

/// The layout without `deny_unknown_fields`.
#[derive(Debug, Deserialize)]
struct Open<'a> {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    n: Option<i64>,
    #[serde(borrow)]
    v: &'a RawValue,
    ok: bool,
    text: String,
}

fn by_serde_open(line: &str) -> Option<Read> {
    let s: Open<'_> = serde_json::from_str(line).ok()?;
    Some(Read {
        kind: s.kind,
        id: s.id,
        n: s.n,
        v: s.v.get().to_owned(),
        ok: s.ok,
        text: s.text,
    })
}

/// Every seed line, in layout or not.
const ALL_SEEDS: &[&str] = &[
    SEEDS[0],
    SEEDS[1],
    SEEDS[2],
    SEEDS[3],
    SEEDS[4],
    SHUFFLED[0],
    SHUFFLED[1],
];

/// The seeds with their members reordered and an unknown member of any shape added.
const SHUFFLED: &[&str] = &[
    r#"{"text":"a\nb","extra":{"deep":[1,-2.5e-3,true,null,{"x":"\u00e9"}]},"ok":true,"v":[1],"n":null,"id":"i","type":"t"}"#,
    r#"{ "type" : "t" , "id":"i", "n" : 3, "v" : { } , "ok":false, "text":"", "z": [ ] }"#,
];

#[test]
fn members_are_read_in_any_order_with_unknown_ones_skipped() {
    for line in SEEDS.iter().chain(SHUFFLED) {
        let walked = walk_any_order(line);
        assert!(walked.is_some(), "{line}");
        assert_eq!(walked, by_serde_open(line), "{line}");
    }
}

fn mutated_from(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    let edit = (0usize..400, 0usize..BYTES.len(), 0u8..3);
    (
        prop::sample::select(seeds),
        prop::collection::vec(edit, 0..4),
    )
        .prop_map(|(seed, edits)| {
            let mut bytes = seed.as_bytes().to_vec();
            for (at, pick, op) in edits {
                let at = at % (bytes.len() + 1);
                match op {
                    0 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    1 if at < bytes.len() => bytes[at] = BYTES[pick],
                    _ => bytes.insert(at, BYTES[pick]),
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
}

/// Any JSON value, nested a few levels.
fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8192))]

    #[test]
    fn members_read_in_any_order_agree_with_serde(line in mutated_from(ALL_SEEDS)) {
        if let Some(walked) = walk_any_order(&line) {
            prop_assert_eq!(Some(walked), by_serde_open(&line), "{}", line);
        }
    }

    #[test]
    fn what_skip_accepts_serde_accepts(line in mutated_from(ALL_SEEDS)) {
        let mut c = Cursor::new(&line);
        c.whitespace();
        if c.skip().and_then(|()| c.end()).is_some() {
            prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(&line).is_ok(), "{}", line);
        }
    }

    #[test]
    fn skip_accepts_any_json(value in json(), pretty in any::<bool>()) {
        let line = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        }
        .expect("a value serialises");
        let mut c = Cursor::new(&line);
        prop_assert!(c.skip().and_then(|()| c.end()).is_some(), "{}", line);
    }
}
