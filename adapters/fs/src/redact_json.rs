//! Redaction of JSON text that keeps it JSON.
//!
//! The artifact files are serialised to text and the text is redacted, so every secret is
//! masked wherever it appears (inside strings, keys, even numbers). Secrets normally sit
//! inside JSON strings, and the mask `[REDACTED]` has no quote or backslash, so masking a
//! substring of a string keeps the document valid.
//!
//! Two cases need care:
//! - a secret equal to JSON syntax (`true`, `null`, a number) would make the text invalid.
//!   The masked text is therefore re-parsed whenever something was masked; when it is no
//!   longer JSON, the document is redacted string by string instead (always valid).
//! - a secret that itself holds a quote, backslash or control character appears *escaped*
//!   in JSON text (`\"`, `\\`, `\n`), so the text pass does not find it and it is written
//!   as is. Secrets are expected to be token-like (API keys); this is a known limit.

use std::borrow::Cow;

use forge_domain::{ForgeError, Redactor};
use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// `value` as JSON text (pretty or compact) with every secret masked. The output is
/// always valid JSON.
///
/// # Errors
/// [`ForgeError::Io`] when `value` cannot be serialised.
pub fn redact_json<T: Serialize + ?Sized>(
    redactor: &Redactor,
    value: &T,
    pretty: bool,
) -> Result<String, ForgeError> {
    let text = to_text(value, pretty)?;
    match redactor.redact(&text) {
        Cow::Borrowed(_) => Ok(text),
        Cow::Owned(masked) => {
            if serde_json::from_str::<IgnoredAny>(&masked).is_ok() {
                Ok(masked)
            } else {
                let mut tree = serde_json::to_value(value)
                    .map_err(|e| ForgeError::io("serialising artifact", e))?;
                redact_strings(redactor, &mut tree);
                to_text(&tree, pretty)
            }
        }
    }
}

fn to_text<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<String, ForgeError> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.map_err(|e| ForgeError::io("serialising artifact", e))
}

/// Masks secrets inside every string and object key of `value`.
fn redact_strings(redactor: &Redactor, value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = redactor.redact(s) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(redactor, v)),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                redact_strings(redactor, &mut v);
                map.insert(redactor.redact(&key).into_owned(), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(secrets: &[&str], input: Value, want: &str) {
        let redactor = Redactor::new().with_secrets(secrets.iter().copied());
        let got = redact_json(&redactor, &input, false).unwrap();
        assert_eq!(got, want);
        serde_json::from_str::<Value>(&got).unwrap();
    }

    #[test]
    fn table() {
        check(&[], json!({"a": "plain"}), r#"{"a":"plain"}"#);
        check(
            &["hunter22"],
            json!({"env": {"KEY": "hunter22"}, "n": 1}),
            r#"{"env":{"KEY":"[REDACTED]"},"n":1}"#,
        );
        check(
            &[],
            json!({"t": "use sk-ant-abcdefghijklmnop1234 now"}),
            r#"{"t":"use [REDACTED] now"}"#,
        );
        // A secret that is also JSON syntax: the text pass would break the document, so
        // only strings are masked.
        check(
            &["true"],
            json!({"ok": true, "s": "it is true"}),
            r#"{"ok":true,"s":"it is [REDACTED]"}"#,
        );
        // Secrets in numbers are masked when the text stays valid (inside a string here).
        check(
            &["12345678"],
            json!({"s": "id 12345678"}),
            r#"{"s":"id [REDACTED]"}"#,
        );
    }
}
