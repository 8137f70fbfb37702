//! Raw JSON kept as text: decoders keep every line the CLI printed without building a
//! `serde_json::Value` for it (the hot path stays one borrowed parse per line).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON document kept verbatim. Serialises as the JSON it holds (not as a string).
///
/// Invariant: the text is valid JSON. Constructors that skip validation are only for text a
/// parser has just accepted; everything else goes through [`RawJson::from_line`].
#[derive(Clone, PartialEq, Eq)]
pub struct RawJson(String);

impl RawJson {
    /// Keeps `line` when it is one JSON document; otherwise stores it as a JSON string so
    /// nothing is lost and the invariant holds.
    pub fn from_line(line: &str) -> Self {
        let trimmed = line.trim();
        if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
            RawJson(trimmed.to_owned())
        } else {
            RawJson::string(line)
        }
    }

    /// Wraps text the caller has just parsed successfully as JSON.
    pub fn from_parsed(json: &str) -> Self {
        RawJson(json.trim().to_owned())
    }

    /// JSON `null`: the input of a tool call whose start was never seen.
    pub fn null() -> Self {
        RawJson(String::from("null"))
    }

    /// A JSON string holding `text`.
    pub fn string(text: &str) -> Self {
        RawJson(serde_json::Value::String(text.to_owned()).to_string())
    }

    /// The JSON of a serialisable value, written straight to text: a decoder builds a small
    /// JSON object from borrowed parts without a `Value` tree. `null` if it cannot serialise
    /// (a map with non-string keys, say).
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Self {
        serde_json::to_string(value).map_or_else(|_| RawJson::null(), RawJson)
    }

    /// From an already-built value.
    pub fn from_value(value: &serde_json::Value) -> Self {
        RawJson(value.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parses into a `Value` (slow path: for tests, drift checks, display).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.0).unwrap_or_else(|_| serde_json::Value::String(self.0.clone()))
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

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match serde_json::from_str::<&RawValue>(&self.0) {
            Ok(raw) => raw.serialize(s),
            // Unreachable while the invariant holds; degrade to a string, never fail.
            Err(_) => s.serialize_str(&self.0),
        }
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through `Value`, not `RawValue`: a RawJson inside an internally tagged enum is
        // deserialised from serde's buffered content, which RawValue cannot read.
        let value = serde_json::Value::deserialize(d)?;
        Ok(RawJson(value.to_string()))
    }
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
}
