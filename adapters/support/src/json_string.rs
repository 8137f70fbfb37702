//! A JSON string literal decoded into one buffer of the right size.
//!
//! serde_json decodes a string that holds escapes into a scratch buffer that grows by
//! doubling, and the caller then copies it out: one huge assistant text cost three times its
//! size for a moment. A decoder that takes the literal as a `RawValue` (which serde_json has
//! already checked) decodes it here once, into a buffer as long as the literal: decoded text
//! is never longer than its escaped form.

use std::borrow::Cow;

/// The text of `literal`, a JSON string literal with its quotes (as a `RawValue` holds it):
/// borrowed when it has no escapes. `None` when it is not a string literal, or holds an
/// escape this does not decode (a lone surrogate): the caller then asks serde_json.
pub fn decode_literal(literal: &str) -> Option<Cow<'_, str>> {
    let body = literal.strip_prefix('"')?.strip_suffix('"')?;
    if !body.contains('\\') {
        return Some(Cow::Borrowed(body));
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest[at + 1..];
        let (decoded, used) = match escape.as_bytes().first()? {
            b'"' => ('"', 1),
            b'\\' => ('\\', 1),
            b'/' => ('/', 1),
            b'b' => ('\u{8}', 1),
            b'f' => ('\u{c}', 1),
            b'n' => ('\n', 1),
            b'r' => ('\r', 1),
            b't' => ('\t', 1),
            b'u' => unicode_escape(escape)?,
            _ => return None,
        };
        out.push(decoded);
        rest = &escape[used..];
    }
    out.push_str(rest);
    Some(Cow::Owned(out))
}

/// The text of `literal`: [`decode_literal`]'s, or serde_json's own answer (its error for a
/// value that is not a string, or an invalid one) for what that leaves to it.
///
/// # Errors
/// serde_json's, when `literal` is not a JSON string it can read.
pub fn literal_text(literal: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    match decode_literal(literal) {
        Some(text) => Ok(text),
        None => serde_json::from_str::<String>(literal).map(Cow::Owned),
    }
}

/// A serde field reader for a text that can be huge (an answer): the value is taken as its
/// literal and decoded by [`literal_text`]. `null` is `None`; any other non-string is the
/// error serde_json gives for a string field. Needs a deserializer over borrowed JSON text.
///
/// # Errors
/// The deserializer's, for a value that is not a JSON string or `null`.
pub fn deserialize_text<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'de, str>>, D::Error> {
    use serde::Deserialize;
    let Some(raw) = Option::<&'de serde_json::value::RawValue>::deserialize(d)? else {
        return Ok(None);
    };
    literal_text(raw.get())
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// `u` and its four hex digits (and a low surrogate's `\uXXXX` after a high one): the
/// character and the bytes used after the backslash.
fn unicode_escape(escape: &str) -> Option<(char, usize)> {
    let unit = hex4(escape.get(1..5)?)?;
    if !(0xD800..0xDC00).contains(&unit) {
        return char::from_u32(unit).map(|c| (c, 5));
    }
    let low = hex4(escape.get(5..11)?.strip_prefix("\\u")?)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    char::from_u32(code).map(|c| (c, 11))
}

fn hex4(digits: &str) -> Option<u32> {
    if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(digits, 16).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(literal: &str, expected: Option<&str>) {
        assert_eq!(decode_literal(literal).as_deref(), expected, "{literal}");
    }

    #[test]
    fn table() {
        check(r#""plain""#, Some("plain"));
        check(r#""""#, Some(""));
        check(r#""a\"b\\c\/d""#, Some("a\"b\\c/d"));
        check(r#""\b\f\n\r\t""#, Some("\u{8}\u{c}\n\r\t"));
        check(r#""\u00e9\u20AC""#, Some("é€"));
        check(r#""\ud83d\ude00!""#, Some("😀!"));
        check(r#""ends with \\""#, Some("ends with \\"));
        // Not a string literal, or an escape left to serde_json.
        check("42", None);
        check("null", None);
        check(r#""lone \ud83d high""#, None);
        check(r#""lone \ude00 low""#, None);
        check(r#""\x""#, None);
        check(r#""\u12""#, None);
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            decode_literal(r#""no escapes""#),
            Some(Cow::Borrowed(_))
        ));
    }

    /// Every character as a `\u` escape (surrogate pairs above the BMP), as some writers do.
    fn all_escaped(text: &str) -> String {
        let mut out = String::from("\"");
        for unit in text.encode_utf16() {
            out.push_str(&format!("\\u{unit:04x}"));
        }
        out.push('"');
        out
    }

    proptest! {
        #[test]
        fn agrees_with_serde_json(text in any::<String>()) {
            let written = serde_json::to_string(&text).unwrap();
            let decoded = decode_literal(&written);
            prop_assert_eq!(decoded.as_deref(), Some(text.as_str()));
            let escaped = all_escaped(&text);
            let decoded = decode_literal(&escaped);
            prop_assert_eq!(decoded.as_deref(), Some(text.as_str()));
            let serde: String = serde_json::from_str(&escaped).unwrap();
            prop_assert_eq!(serde, text);
        }
    }
}
