//! Reading a CLI's JSON line in one validating pass.
//!
//! Codex and Gemini print every event as compact JSON with a fixed key order (serde's struct
//! order, `JSON.stringify`'s insertion order). A decoder that knows the layout of its hot
//! lines can walk them with a [`Cursor`]: punctuation and keys are matched as literal text,
//! and only the values are read — strings checked as JSON strings (and decoded in the same
//! pass), numbers as JSON numbers, nested values checked by [`Cursor::skip`]. A line the
//! cursor walks to its end is therefore one valid JSON document with exactly those keys, and
//! the values the decoder read are the ones `serde_json` would give. Lines whose key order is
//! not fixed (Claude's) are walked member by member ([`Cursor::object`]). Anything else
//! (another key order, a new field, an escaped key, an escape no string can hold) makes a
//! step return `None`, and the decoder takes its general `serde_json` path, which reports
//! the line exactly as before.
//!
//! Why not `serde_json` alone: on the short lines these CLIs print (100–200 bytes, ten-odd
//! tokens), a typed `serde_json` read costs about twice a syntax-only pass, and so did every
//! other JSON crate tried (jiter, simd-json, sonic-rs); walking a known layout costs less
//! than one. The property tests in `tests/layout.rs` check the cursor against `serde_json` on
//! mutated lines: whatever the cursor reads, serde reads alike, and what `skip` accepts,
//! serde accepts.

use std::borrow::Cow;

/// Nesting [`Cursor::skip`] follows at most.
pub const MAX_DEPTH: usize = 64;

/// A position in a line being walked. Every step consumes input only when it succeeds.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    pub fn new(line: &'a str) -> Self {
        Self { rest: line }
    }

    /// What is left to read.
    #[inline]
    pub fn rest(&self) -> &'a str {
        self.rest
    }

    /// Consumes `text` verbatim: punctuation and keys, e.g. `br#","item":{"id":"#`. A
    /// fixed-size array, so the compare compiles to a few word compares (slice equality
    /// calls `memcmp`, which took a tenth of the decoders' time).
    #[inline(always)]
    pub fn expect<const N: usize>(&mut self, text: &[u8; N]) -> Option<()> {
        if self.rest.as_bytes().first_chunk::<N>()? != text {
            return None;
        }
        self.rest = self.rest.get(N..)?;
        Some(())
    }

    /// Consumes `text` when the line continues with it; says whether it did.
    #[inline(always)]
    pub fn accept<const N: usize>(&mut self, text: &[u8; N]) -> bool {
        self.expect(text).is_some()
    }

    /// A JSON string (the cursor on its opening quote), validated: no raw control
    /// characters, only legal escapes.
    #[inline(always)]
    pub fn string(&mut self) -> Option<JsonStr<'a>> {
        // Keys, kinds and ids are short and plain: their closing quote is found in the first
        // two words right here, without a call (a call's register saving cost as much as the
        // scan). Everything else takes the general scan.
        let bytes = self.rest.as_bytes();
        if bytes.first() != Some(&b'"') {
            return None;
        }
        let mut plain_to = 1;
        for start in [1, 9] {
            let Some(word) = bytes
                .get(start..start + 8)
                .and_then(|w| w.first_chunk::<8>())
            else {
                break;
            };
            let mask = special_mask(u64::from_le_bytes(*word));
            if mask == 0 {
                plain_to = start + 8;
                continue;
            }
            let stop = start + (mask.trailing_zeros() / 8) as usize;
            if bytes.get(stop) == Some(&b'"') {
                let (literal, rest) = self.rest.split_at_checked(stop + 1)?;
                self.rest = rest;
                return Some(JsonStr {
                    literal,
                    escaped: false,
                });
            }
            plain_to = stop;
            break;
        }
        self.string_scanned(plain_to)
    }

    /// [`Cursor::string`] past its first `from` bytes (the quote and plain text): scanned to
    /// its end, escapes checked.
    #[inline(never)]
    fn string_scanned(&mut self, from: usize) -> Option<JsonStr<'a>> {
        let bytes = self.rest.as_bytes();
        let mut at = from;
        let mut escaped = false;
        loop {
            let stop = next_special(bytes, at)?;
            match bytes.get(stop)? {
                b'"' => {
                    let (literal, rest) = self.rest.split_at(stop + 1);
                    self.rest = rest;
                    return Some(JsonStr { literal, escaped });
                }
                b'\\' => {
                    escaped = true;
                    at = stop + escape_len(bytes.get(stop + 1..)?)? + 1;
                }
                // A raw control character: JSON strings may not hold one.
                _ => return None,
            }
        }
    }

    /// A JSON string's text (the cursor on its opening quote), checked and unescaped in one
    /// pass: borrowed from the line when it has no escapes. `None` as for
    /// [`Cursor::string`], and for a lone surrogate escape (text cannot hold one).
    #[inline(always)]
    pub fn string_text(&mut self) -> Option<Cow<'a, str>> {
        let bytes = self.rest.as_bytes();
        if bytes.first() != Some(&b'"') {
            return None;
        }
        // Short plain strings: found here, as in `string`.
        if let Some(word) = bytes.get(1..9).and_then(|w| w.first_chunk::<8>()) {
            let mask = special_mask(u64::from_le_bytes(*word));
            if mask != 0 {
                let stop = 1 + (mask.trailing_zeros() / 8) as usize;
                if bytes.get(stop) == Some(&b'"') {
                    let text = self.rest.get(1..stop)?;
                    self.rest = self.rest.get(stop + 1..)?;
                    return Some(Cow::Borrowed(text));
                }
            }
        }
        self.string_text_scanned()
    }

    /// [`Cursor::string_text`] for any string.
    #[inline(never)]
    fn string_text_scanned(&mut self) -> Option<Cow<'a, str>> {
        let bytes = self.rest.as_bytes();
        let mut at = 1;
        // Where the plain text not yet copied starts; the copy begins at the first escape.
        let mut plain_from = 1;
        let mut decoded: Option<Vec<u8>> = None;
        loop {
            let stop = next_special(bytes, at)?;
            match bytes.get(stop)? {
                b'"' => {
                    let text = match decoded {
                        None => Cow::Borrowed(self.rest.get(1..stop)?),
                        Some(mut text) => {
                            text.extend_from_slice(bytes.get(plain_from..stop)?);
                            Cow::Owned(String::from_utf8(text).ok()?)
                        }
                    };
                    self.rest = self.rest.get(stop + 1..)?;
                    return Some(text);
                }
                b'\\' => {
                    let text = decoded.get_or_insert_with(|| Vec::with_capacity(2 * stop));
                    copy_run(text, bytes.get(plain_from..stop)?);
                    at = stop + 1 + unescape_one(bytes.get(stop + 1..)?, text)?;
                    plain_from = at;
                }
                // A raw control character: JSON strings may not hold one.
                _ => return None,
            }
        }
    }

    /// Marks where a value starts: [`Cursor::since`] gives the text read after it.
    #[inline]
    pub fn mark(&self) -> Cursor<'a> {
        *self
    }

    /// The text read between `mark` and here (a value the steps in between walked whole).
    #[inline]
    pub fn since(&self, mark: Cursor<'a>) -> &'a str {
        let read = mark.rest.len().saturating_sub(self.rest.len());
        mark.rest.get(..read).unwrap_or_default()
    }

    /// A JSON integer that fits `i64`.
    #[inline]
    pub fn int(&mut self) -> Option<i64> {
        let bytes = self.rest.as_bytes();
        let sign = usize::from(bytes.first() == Some(&b'-'));
        let digits = bytes
            .get(sign..)?
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = sign + digits;
        // JSON has no leading zeros, and a fraction or exponent makes it no integer;
        // `serde_json` reads `-0` as a float.
        let zero_first = bytes.get(sign) == Some(&b'0');
        let leading_zero = zero_first && (digits > 1 || sign == 1);
        if digits == 0 || leading_zero || matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let (number, rest) = self.rest.split_at(end);
        let value = number.parse().ok()?;
        self.rest = rest;
        Some(value)
    }

    /// A JSON integer that fits `u64`.
    #[inline]
    pub fn uint(&mut self) -> Option<u64> {
        let mut probe = *self;
        let value = u64::try_from(probe.int()?).ok()?;
        *self = probe;
        Some(value)
    }

    /// `null`, or an integer.
    #[inline]
    pub fn int_or_null(&mut self) -> Option<Option<i64>> {
        if self.accept(b"null") {
            return Some(None);
        }
        self.int().map(Some)
    }

    /// `true` or `false`.
    #[inline]
    pub fn bool(&mut self) -> Option<bool> {
        if self.accept(b"true") {
            Some(true)
        } else if self.accept(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// Any JSON value's text, checked as JSON (see [`Cursor::skip`]) and returned verbatim.
    pub fn raw(&mut self) -> Option<&'a str> {
        let mark = self.mark();
        self.skip()?;
        Some(self.since(mark))
    }

    /// [`Cursor::raw`], or `None` inside for `null` (an absent value, as serde reads an
    /// `Option` of a raw value).
    pub fn raw_unless_null(&mut self) -> Option<Option<&'a str>> {
        if self.accept(b"null") {
            return Some(None);
        }
        self.raw().map(Some)
    }

    /// An object (the cursor on its `{`), member by member, in whatever order the line has
    /// them: `member(key, cursor)` reads or [`Cursor::skip`]s each value. For lines whose
    /// key order is not fixed (Claude's, which pass the model server's objects through).
    /// A reader that matches keys should refuse escaped ones ([`JsonStr::plain`]), which
    /// could spell a key it reads.
    #[inline]
    pub fn object(
        &mut self,
        mut member: impl FnMut(JsonStr<'a>, &mut Cursor<'a>) -> Option<()>,
    ) -> Option<()> {
        let mut c = *self;
        c.expect(b"{")?;
        c.whitespace();
        if !c.accept(b"}") {
            loop {
                let key = c.string()?;
                c.whitespace();
                c.expect(b":")?;
                c.whitespace();
                member(key, &mut c)?;
                c.whitespace();
                if c.accept(b"}") {
                    break;
                }
                c.expect(b",")?;
                c.whitespace();
            }
        }
        *self = c;
        Some(())
    }

    /// An array (the cursor on its `[`), element by element: `element(cursor)` reads or
    /// skips each.
    #[inline]
    pub fn array(&mut self, mut element: impl FnMut(&mut Cursor<'a>) -> Option<()>) -> Option<()> {
        let mut c = *self;
        c.expect(b"[")?;
        c.whitespace();
        if !c.accept(b"]") {
            loop {
                element(&mut c)?;
                c.whitespace();
                if c.accept(b"]") {
                    break;
                }
                c.expect(b",")?;
                c.whitespace();
            }
        }
        *self = c;
        Some(())
    }

    /// Any JSON value, checked as JSON and skipped; its text is [`Cursor::since`] a mark.
    /// Nesting deeper than [`MAX_DEPTH`] is `None` (left to `serde_json`, whose own limit
    /// is higher).
    pub fn skip(&mut self) -> Option<()> {
        self.skip_nested(0)
    }

    fn skip_nested(&mut self, depth: usize) -> Option<()> {
        match self.rest.as_bytes().first()? {
            b'"' => self.string().map(drop),
            b'{' if depth < MAX_DEPTH => self.object(|_, c| c.skip_nested(depth + 1)),
            b'[' if depth < MAX_DEPTH => self.array(|c| c.skip_nested(depth + 1)),
            b't' => self.expect(b"true"),
            b'f' => self.expect(b"false"),
            b'n' => self.expect(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    /// A JSON number of any form (`-1.5e3`), as written.
    pub fn number(&mut self) -> Option<&'a str> {
        let bytes = self.rest.as_bytes();
        let digits_from = |at: usize| {
            bytes
                .get(at..)
                .map_or(0, |b| b.iter().take_while(|d| d.is_ascii_digit()).count())
        };
        let mut at = usize::from(bytes.first() == Some(&b'-'));
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => at += digits_from(at),
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            let fraction = digits_from(at + 1);
            if fraction == 0 {
                return None;
            }
            at += 1 + fraction;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let exponent = digits_from(at);
            if exponent == 0 {
                return None;
            }
            at += exponent;
        }
        let (number, rest) = self.rest.split_at_checked(at)?;
        self.rest = rest;
        Some(number)
    }

    /// Skips JSON whitespace (none, in the compact lines the CLIs print: one byte looked at).
    #[inline(always)]
    pub fn whitespace(&mut self) {
        if matches!(
            self.rest.as_bytes().first(),
            Some(b' ' | b'\t' | b'\r' | b'\n')
        ) {
            let skipped = self
                .rest
                .bytes()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
                .count();
            self.rest = self.rest.get(skipped..).unwrap_or_default();
        }
    }

    /// The end of the line: nothing left but JSON whitespace (a CRLF line's `\r`).
    #[inline]
    pub fn end(&self) -> Option<()> {
        self.rest
            .bytes()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .then_some(())
    }
}

/// A JSON string as it stands in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonStr<'a> {
    /// With its quotes, escapes as written: valid JSON on its own.
    literal: &'a str,
    escaped: bool,
}

impl<'a> JsonStr<'a> {
    /// The string literal, quotes included: ready to be spliced into other JSON.
    #[inline]
    pub fn literal(&self) -> &'a str {
        self.literal
    }

    /// The text between the quotes, escapes as written.
    #[inline]
    pub fn body(&self) -> &'a str {
        self.literal
            .get(1..self.literal.len().saturating_sub(1))
            .unwrap_or_default()
    }

    /// The decoded text: borrowed from the line unless it has escapes. `None` for an
    /// escape JSON allows but a string cannot hold (a lone surrogate `\ud800`).
    #[inline]
    pub fn text(&self) -> Option<Cow<'a, str>> {
        if self.escaped {
            unescape(self.body()).map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(self.body()))
        }
    }

    /// The text when it has no escapes (ids, kinds, statuses), without decoding.
    #[inline]
    pub fn plain(&self) -> Option<&'a str> {
        (!self.escaped).then(|| self.body())
    }
}

/// Where the first `"`, `\\` or control character at or after `at` is. The first bytes are
/// looked at one by one: between escapes in text like `1\n2\n3` a run is a byte or
/// two, shorter than a word.
#[inline(always)]
fn next_special(bytes: &[u8], at: usize) -> Option<usize> {
    for i in at..at + 4 {
        let b = *bytes.get(i)?;
        if b == b'"' || b == b'\\' || b < 0x20 {
            return Some(i);
        }
    }
    Some(at + 4 + find_special(bytes.get(at + 4..)?)?)
}

/// Where the first byte a string scan stops at is: `"`, `\\` or a control character.
/// Most strings in these lines (ids, kinds, statuses) are short: eight bytes are tested at a
/// time in a `u64` (as `serde_json` does), and a long string's rest gets `memchr` and a
/// vectorised check.
#[inline]
fn find_special(bytes: &[u8]) -> Option<usize> {
    const SHORT: usize = 64;
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let mask = special_mask(u64::from_le_bytes(word.try_into().ok()?));
        if mask != 0 {
            return Some(at + (mask.trailing_zeros() / 8) as usize);
        }
        at += 8;
        if at == SHORT {
            return find_special_long(bytes.get(SHORT..)?).map(|found| found + SHORT);
        }
    }
    let tail = bytes.get(at..)?;
    let found = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(at + found)
}

/// [`find_special`] past a string's first 64 bytes: `memchr` for the quote or backslash,
/// then a vectorised check for control characters before it.
fn find_special_long(bytes: &[u8]) -> Option<usize> {
    let end = memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len());
    let span = bytes.get(..end)?;
    let stop = if has_control(span) {
        span.iter().position(|&b| b < 0x20)?
    } else {
        end
    };
    (stop < bytes.len()).then_some(stop)
}

/// The high bit of each byte of `word` set where the byte is `"`, `\\` or below 0x20, and
/// of the first such byte at least (bits above it may be set spuriously by borrows).
#[inline]
fn special_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & HIGH
}

/// Whether `bytes` hold a raw control character, which JSON strings may not. No early
/// exit, so the loop vectorises.
#[inline]
fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |found, &b| found | (b < 0x20))
}

/// The text of a string body whose escapes [`Cursor::string`] has checked, in one
/// allocation (`serde_json` would grow a scratch buffer step by step, then copy it).
/// `None` for a `\u` escape no `char` can hold: a lone surrogate, as `serde_json` says.
fn unescape(body: &str) -> Option<String> {
    let bytes = body.as_bytes();
    let mut text = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', bytes.get(at..)?) {
        let escape = at + found;
        text.extend_from_slice(bytes.get(at..escape)?);
        at = escape + 1 + unescape_one(bytes.get(escape + 1..)?, &mut text)?;
    }
    text.extend_from_slice(bytes.get(at..)?);
    String::from_utf8(text).ok()
}

/// Appends `run` to `text`: byte by byte when short (between escapes in text like
/// `1\n2\n3`), where a `memcpy` call would cost more than the copy.
#[inline(always)]
fn copy_run(text: &mut Vec<u8>, run: &[u8]) {
    if run.len() <= 8 {
        text.reserve(run.len());
        for &b in run {
            text.push(b);
        }
    } else {
        text.extend_from_slice(run);
    }
}

/// Decodes the escape whose backslash precedes `after` onto `text`; the bytes it took after
/// the backslash. `None` for an escape JSON does not allow, or a lone surrogate.
#[inline]
fn unescape_one(after: &[u8], text: &mut Vec<u8>) -> Option<usize> {
    // A newline first: most escapes in command output and file text are `\n`, and a test
    // here predicts better than the jump through the table below.
    let first = *after.first()?;
    if first == b'n' {
        text.push(b'\n');
        return Some(1);
    }
    let byte = match first {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 0x08,
        b'f' => 0x0c,
        b @ (b'"' | b'\\' | b'/') => b,
        b'u' => {
            let hex = |at: usize| {
                let digits = after.get(at..at + 4)?;
                if !digits.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
            };
            let high = hex(1)?;
            let (code, used) = match high {
                0xD800..=0xDBFF => {
                    if after.get(5..7) != Some(b"\\u".as_slice()) {
                        return None;
                    }
                    let low = hex(7)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), 11)
                }
                _ => (high, 5),
            };
            let mut utf8 = [0; 4];
            text.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut utf8).as_bytes());
            return Some(used);
        }
        _ => return None,
    };
    text.push(byte);
    Some(1)
}

/// The length of the escape whose backslash precedes `after` (backslash not counted), if
/// it is one JSON allows.
#[inline]
fn escape_len(after: &[u8]) -> Option<usize> {
    match after.first()? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => after
            .get(1..5)?
            .iter()
            .all(u8::is_ascii_hexdigit)
            .then_some(5),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(line: &str) -> Option<(String, &str)> {
        let mut c = Cursor::new(line);
        let s = c.string()?;
        Some((s.text()?.into_owned(), c.rest()))
    }

    #[test]
    fn strings_are_read_to_their_closing_quote_and_decoded() {
        assert_eq!(string(r#""abc",1"#), Some(("abc".into(), ",1")));
        assert_eq!(string(r#""a\"b\\c\n",1"#), Some(("a\"b\\c\n".into(), ",1")));
        assert_eq!(string(r#""\u00e9""#), Some(("é".into(), "")));
        assert_eq!(string(r#""""#), Some((String::new(), "")));
        assert_eq!(
            string(r#""\ud83d\ude00\b\f\/\r\t""#),
            Some(("😀\u{8}\u{c}/\r\t".into(), ""))
        );
    }

    #[test]
    fn strings_json_would_reject_are_not_read() {
        for bad in [
            "\"a\tb\"",
            "\"a\u{1}b\"",
            r#""\x""#,
            r#""\u12g4""#,
            r#""\u12""#,
            r#""abc"#,
            r#""abc\"#,
            "abc\"",
        ] {
            assert_eq!(Cursor::new(bad).string(), None, "{bad}");
        }
        // JSON's grammar allows a lone surrogate; a string cannot hold one.
        for lone in [r#""\ud800""#, r#""\udc00""#, r#""\ud800\u0041""#] {
            let read = Cursor::new(lone).string();
            assert!(read.is_some_and(|s| s.text().is_none()), "{lone}");
            assert!(serde_json::from_str::<String>(lone).is_err(), "{lone}");
        }
    }

    #[test]
    fn plain_strings_are_borrowed_and_escaped_ones_are_not_plain() {
        let mut c = Cursor::new(r#""id_1""a\nb""#);
        let plain = c.string();
        let escaped = c.string();
        assert_eq!(plain.and_then(|s| s.plain()), Some("id_1"));
        assert_eq!(escaped.and_then(|s| s.plain()), None);
        assert_eq!(escaped.map(|s| s.literal()), Some(r#""a\nb""#));
    }

    #[test]
    fn integers_follow_the_json_grammar() {
        let int = |s: &str| Cursor::new(s).int();
        assert_eq!(int("0}"), Some(0));
        assert_eq!(int("-12,"), Some(-12));
        assert_eq!(int("9223372036854775807"), Some(i64::MAX));
        for bad in [
            "01",
            "-0",
            "-",
            "1.5",
            "1e3",
            "x",
            "",
            "99999999999999999999",
        ] {
            assert_eq!(int(bad), None, "{bad}");
        }
        assert_eq!(Cursor::new("-1").uint(), None);
        assert_eq!(Cursor::new("null,").int_or_null(), Some(None));
    }

    #[test]
    fn nested_values_are_validated_and_kept_verbatim() {
        let mut c = Cursor::new(r#"{"a":[1,{"b":null}]},"x":1"#);
        assert_eq!(c.raw(), Some(r#"{"a":[1,{"b":null}]}"#));
        assert_eq!(c.rest(), r#","x":1"#);
        assert_eq!(Cursor::new(r#"{"a":}"#).raw(), None);
        assert_eq!(Cursor::new(r#" {"a":1}"#).raw(), None);
        assert_eq!(Cursor::new("null,").raw_unless_null(), Some(None));
        assert_eq!(Cursor::new("[],").raw_unless_null(), Some(Some("[]")));
    }

    #[test]
    fn a_failed_step_consumes_nothing() {
        let mut c = Cursor::new(r#""abc"#);
        assert_eq!(c.string(), None);
        assert_eq!(c.expect(b"x"), None);
        assert_eq!(c.int(), None);
        assert_eq!(c.rest(), r#""abc"#);
    }

    #[test]
    fn a_line_ends_with_nothing_but_whitespace() {
        assert_eq!(Cursor::new("").end(), Some(()));
        assert_eq!(Cursor::new(" \r").end(), Some(()));
        assert_eq!(Cursor::new("}").end(), None);
    }
}
