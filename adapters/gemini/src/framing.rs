//! Classifying a stdout line before it is parsed: JSON or text, and the fixed prefix gemini
//! prints on every event.

/// Fast path for the shape gemini always prints (`JSON.stringify` of an object whose first
/// keys are `type` and `timestamp`): `{"type":"<kind>","timestamp":"<iso>",<rest>`. Returns
/// the kind and `<rest>`, so only `{<rest>` is parsed and the two leading fields (a third of
/// a typical line) are not read twice. Anything else (`None`) takes the general path.
pub fn split_fixed_prefix(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    let end = closing_quote(rest)?;
    let kind = &rest[..end];
    let rest = rest[end + 1..].strip_prefix(",\"timestamp\":\"")?;
    let end = closing_quote(rest)?;
    let rest = rest[end + 1..].strip_prefix(',')?;
    Some((kind, rest))
}

/// Index of the `"` closing a string that starts `s`; `None` when an escape comes first
/// (the `"` search would be wrong), a control character does (JSON forbids it raw: the line
/// is left to the parser, which says so), or there is none. The quote is found by `memchr`
/// and the bytes before it checked without early exits, so both run a word at a time.
fn closing_quote(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let end = memchr::memchr(b'"', bytes)?;
    let plain = bytes
        .get(..end)?
        .iter()
        .fold(true, |plain, &b| plain & (b >= 0x20) & (b != b'\\'));
    plain.then_some(end)
}

/// Whether a trimmed line should be read as JSON. `[` followed by an upper-case letter is
/// a log tag (`[STARTUP] …`, `[ERROR] …`), never a JSON array.
pub fn looks_like_json(trimmed: &str) -> bool {
    match trimmed.as_bytes() {
        [b'{', ..] => true,
        [b'[', next, ..] => !next.is_ascii_uppercase(),
        [b'['] => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        let check = |line: &str, json: bool| assert_eq!(looks_like_json(line), json, "{line}");
        check("{\"type\":\"init\"}", true);
        check("[1]", true);
        check("[", true);
        check("[STARTUP] phase", false);
        check("Warning: x", false);
        check("", false);
    }

    #[test]
    fn the_fixed_prefix_is_split_off() {
        let line = r#"{"type":"message","timestamp":"2026-11-21T23:41:30.566Z","role":"user"}"#;
        assert_eq!(
            split_fixed_prefix(line),
            Some(("message", r#""role":"user"}"#))
        );
        assert_eq!(
            split_fixed_prefix(r#"{"type":"a\"b","timestamp":"t","x":1}"#),
            None
        );
        assert_eq!(
            split_fixed_prefix(r#"{"type":"init","timestamp":"t"}"#),
            None
        );
        // A raw control character is not JSON: the parser must see it.
        assert_eq!(
            split_fixed_prefix("{\"type\":\"init\",\"timestamp\":\"t\u{1}\",\"x\":1}"),
            None
        );
        assert_eq!(
            split_fixed_prefix(r#"{"timestamp":"t","type":"init","x":1}"#),
            None
        );
    }
}
