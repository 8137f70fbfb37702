//! Raw JSON kept as text: decoders keep every line the CLI printed without building a
//! `serde_json::Value` for it (the hot path stays one borrowed parse per line).

use std::cell::RefCell;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::shared_text::SharedText;

/// A JSON document kept verbatim. Serialises as the JSON it holds (not as a string).
///
/// Invariant: the text is valid JSON. Constructors that skip validation are only for text a
/// parser has just accepted; everything else goes through [`RawJson::from_line`].
///
/// Shared text ([`SharedText`], so a line read into a `String` is kept without a copy): an
/// event and the accumulator's tool call both keep a call's input, and a clone is a
/// reference count, not a second copy.
#[derive(Clone, PartialEq, Eq)]
pub struct RawJson(SharedText);

impl RawJson {
    /// Keeps `line` when it is one JSON document; otherwise stores it as a JSON string so
    /// nothing is lost and the invariant holds.
    pub fn from_line(line: &str) -> Self {
        let trimmed = line.trim();
        if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
            RawJson(trimmed.into())
        } else {
            RawJson::string(line)
        }
    }

    /// Wraps text the caller has just parsed successfully as JSON.
    pub fn from_parsed(json: &str) -> Self {
        RawJson(json.trim().into())
    }

    /// [`RawJson::from_parsed`] taking the text: kept without a copy unless it has
    /// surrounding whitespace to trim (a line of tens of megabytes is not copied again).
    pub fn from_parsed_owned(json: String) -> Self {
        if json.trim().len() == json.len() {
            RawJson(json.into())
        } else {
            RawJson::from_parsed(&json)
        }
    }

    /// JSON `null`: the input of a tool call whose start was never seen.
    pub fn null() -> Self {
        RawJson("null".into())
    }

    /// A JSON string holding `text`.
    pub fn string(text: &str) -> Self {
        RawJson::from_serialize(text)
    }

    /// The JSON of a serialisable value, written straight to text: a decoder builds a small
    /// JSON object from borrowed parts without a `Value` tree. `null` if it cannot serialise
    /// (a map with non-string keys, say).
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Self {
        written(|buf| serde_json::to_writer(buf, value).ok()).map_or_else(RawJson::null, RawJson)
    }

    /// JSON spliced together from pieces the caller has just parsed (punctuation, keys and
    /// string literals copied from a valid line): one allocation, no escaping pass.
    pub fn from_parsed_parts(parts: &[&str]) -> Self {
        thread_local! {
            // Text, not bytes: pieces of `str` join into valid UTF-8, no check needed.
            static JOINED: RefCell<String> = const { RefCell::new(String::new()) };
        }
        JOINED.with(|joined| {
            let mut fresh = String::new();
            let mut guard = joined.try_borrow_mut().ok();
            let text = guard.as_deref_mut().unwrap_or(&mut fresh);
            text.clear();
            for part in parts {
                text.push_str(part);
            }
            RawJson(text.as_str().into())
        })
    }

    /// From an already-built value.
    pub fn from_value(value: &serde_json::Value) -> Self {
        RawJson::from_serialize(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parses into a `Value` (slow path: for tests, drift checks, display).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.0)
            .unwrap_or_else(|_| serde_json::Value::String(self.0.as_str().to_owned()))
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", self.0)
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name under which `serde_json` recognises a raw value when serialising (what
/// `RawValue`'s own `Serialize` emits). Checked by `serialises_verbatim_through_serde_json`.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl Serialize for RawJson {
    /// Written verbatim, as a `RawValue` is, without parsing the text again first (results
    /// carry every raw line of a run: a second parse per line was a third of writing one).
    /// The type's invariant (valid JSON) is what keeps the output valid; debug builds check.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        debug_assert!(
            serde_json::from_str::<serde::de::IgnoredAny>(&self.0).is_ok(),
            "RawJson holds invalid JSON: {}",
            self.0
        );
        let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(RAW_VALUE_TOKEN, &*self.0)?;
        raw.end()
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through `Value`, not `RawValue`: a RawJson inside an internally tagged enum is
        // deserialised from serde's buffered content, which RawValue cannot read.
        let value = serde_json::Value::deserialize(d)?;
        Ok(RawJson::from_value(&value))
    }
}

/// Text written by `write` into a reused buffer, then copied once into shared text: writing
/// a `String` and converting it would allocate twice.
fn written(write: impl FnOnce(&mut Vec<u8>) -> Option<()>) -> Option<SharedText> {
    thread_local! {
        static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        // A nested call (a `Serialize` impl that builds a RawJson) gets a fresh buffer.
        let mut fresh = Vec::new();
        let mut guard = scratch.try_borrow_mut().ok();
        let buf = guard.as_deref_mut().unwrap_or(&mut fresh);
        buf.clear();
        write(buf)?;
        std::str::from_utf8(buf).ok().map(SharedText::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_serialise_verbatim_and_other_text_as_strings() {
        let json = RawJson::from_line("{\"type\":\"x\",\"n\":1}\r");
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            "{\"type\":\"x\",\"n\":1}"
        );
        let text = RawJson::from_line("Warning: not json");
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            "\"Warning: not json\""
        );
        let back: RawJson = serde_json::from_str("[1, 2]").unwrap();
        assert_eq!(back.as_str(), "[1,2]");
    }

    #[test]
    fn serialises_verbatim_through_serde_json() {
        // Spacing kept as written: proof the text went out as is, not parsed and rewritten
        // (if serde_json ever renamed its raw-value token, this would print an object).
        let raw = RawJson::from_parsed(r#"{"b": [1,  2], "a":"\u00e9"}"#);
        let nested = serde_json::json!({ "raw": raw.to_value() });
        assert_eq!(
            serde_json::to_string(&raw).ok().as_deref(),
            Some(r#"{"b": [1,  2], "a":"\u00e9"}"#)
        );
        assert_eq!(
            serde_json::to_string(&vec![raw.clone()]).ok().as_deref(),
            Some(r#"[{"b": [1,  2], "a":"\u00e9"}]"#)
        );
        assert_eq!(nested["raw"]["b"][1], 2);
    }

    #[test]
    fn built_json_is_compact_and_strings_are_escaped() {
        assert_eq!(RawJson::string("a \"q\"\n").as_str(), r#""a \"q\"\n""#);
        let value = serde_json::json!({"b": [1, null], "a": "x"});
        assert_eq!(
            RawJson::from_value(&value).as_str(),
            // Keys in the value's own order (serde_json's preserve_order, on workspace-wide).
            r#"{"b":[1,null],"a":"x"}"#
        );
        let map = std::collections::BTreeMap::from([((1, 2), 3)]);
        assert_eq!(RawJson::from_serialize(&map).as_str(), "null");
        // The shared buffer is left clean for the next call.
        assert_eq!(RawJson::from_serialize(&[1, 2]).as_str(), "[1,2]");
    }
}
