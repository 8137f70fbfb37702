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
    let v = c.value()?.get().to_owned();
    c.expect(br#","ok":"#)?;
    let ok = c.bool()?;
    c.expect(br#","text":"#)?;
    let text = c.string()?.text()?.into_owned();
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
    r#"{"type":"x","id":"","n":-42,"v":[],"ok":true,"text":"\ud83d\ude00 \/"}"#,
    // Strings past the cursor's short-string scan (64 bytes), escapes on either side of it.
    r#"{"type":"item.completed with a long kind that goes on past sixty-four bytes","id":"a\tb","n":7,"v":null,"ok":false,"text":"test suite::ok ... ok\ntest suite::ok ... ok\ntest suite::ok ... ok\ntest suite::ok ... ok\n\u00e9 done"}"#,
];

/// Bytes a mutation writes: JSON's structural and escape characters among others.
const BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtrufalsn \t\r\nu/bx\x01\x1f";

fn mutated() -> impl Strategy<Value = String> {
    let edit = (0usize..400, 0usize..BYTES.len(), 0u8..3);
    (
        prop::sample::select(SEEDS),
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
