//! Classifying a stdout line before it is parsed: JSON or text.

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
}
