//! Secret redaction for artifacts and logs.
//!
//! Two nets: exact values the caller knows are secret (API keys from the run's environment),
//! and well-known token shapes (`sk-…`, `AIza…`, `ghp_…`, `Bearer …`) wherever they appear.

use std::borrow::Cow;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// Token prefixes whose following characters are a credential.
const TOKEN_PREFIXES: &[&str] = &[
    "sk-ant-",
    "sk-proj-",
    "sk-",
    "AIza",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "Bearer ",
];

/// Shortest run after a prefix that we treat as a token: shorter runs are ordinary words
/// (`sk-fake` in a test is still caught as a known value, not as a shape).
const MIN_TOKEN_BODY: usize = 12;

/// Environment variable names whose values are secrets.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"]
        .iter()
        .any(|needle| upper.contains(needle))
}

#[derive(Debug, Clone, Default)]
pub struct Redactor {
    known: Vec<String>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds exact secret values. Values shorter than 4 characters are ignored: masking
    /// them would mangle ordinary text.
    pub fn with_secrets<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for v in values {
            let v = v.into();
            if v.len() >= 4 && !self.known.contains(&v) {
                self.known.push(v);
            }
        }
        // Longest first, so a secret that contains another is masked whole.
        self.known.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self
    }

    /// Adds the values of every secret-looking variable among `env`.
    pub fn with_secret_env<'a, I>(self, env: I) -> Self
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let values: Vec<String> = env
            .into_iter()
            .filter(|(k, _)| is_secret_name(k))
            .map(|(_, v)| v.to_owned())
            .collect();
        self.with_secrets(values)
    }

    /// `text` with every secret masked; borrows when there is nothing to mask.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        for secret in &self.known {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
        if has_token_prefix(&out) {
            out = Cow::Owned(mask_token_shapes(&out));
        }
        out
    }

    /// Whether serialising `value` as JSON would show anything to mask, found by streaming
    /// the serialisation through a scan, without building its text: a result holding a
    /// 50 MB line is checked without a 50 MB copy. May say yes for a value [`Redactor::redact`]
    /// would leave alone (a token cut by a chunk seam is looked at from both sides), never no
    /// for one it would change.
    pub fn would_redact<T: serde::Serialize + ?Sized>(&self, value: &T) -> bool {
        let mut probe = Probe {
            redactor: self,
            seam: Vec::new(),
            overlap: self.longest_match(),
            found: false,
        };
        // A serialisation error is treated as "might hold a secret": the caller then takes
        // the careful path, which reports the error itself.
        serde_json::to_writer(&mut probe, value).is_err() || probe.found
    }

    /// Whether [`Redactor::redact`] would change `text`, without building the masked copy.
    pub fn has_secret(&self, text: &str) -> bool {
        self.known
            .iter()
            .any(|secret| text.contains(secret.as_str()))
            || (has_token_prefix(text) && has_token_shape(text))
    }

    /// Bytes a match can span: the longest known value, or a token prefix and its body.
    fn longest_match(&self) -> usize {
        let known = self.known.iter().map(String::len).max().unwrap_or(0);
        let shape = TOKEN_PREFIXES.iter().map(|p| p.len()).max().unwrap_or(0) + MIN_TOKEN_BODY;
        known.max(shape)
    }
}

/// The sink of [`Redactor::would_redact`]: each chunk is scanned where it lies, and the
/// seam between chunks (the last `overlap` bytes of one and the first of the next) apart.
struct Probe<'a> {
    redactor: &'a Redactor,
    seam: Vec<u8>,
    overlap: usize,
    found: bool,
}

impl Probe<'_> {
    fn scan(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        if self.redactor.has_secret(&text) {
            self.found = true;
        }
    }
}

impl std::io::Write for Probe<'_> {
    fn write(&mut self, chunk: &[u8]) -> std::io::Result<usize> {
        if self.found || chunk.is_empty() {
            return Ok(chunk.len());
        }
        self.seam
            .extend_from_slice(&chunk[..chunk.len().min(self.overlap)]);
        let seam = std::mem::take(&mut self.seam);
        self.scan(&seam);
        self.scan(chunk);
        // What a match starting here could still need from the next chunk.
        let keep_from = chunk.len().saturating_sub(self.overlap);
        self.seam = if keep_from == 0 {
            let mut whole = seam;
            let old = whole.len().saturating_sub(self.overlap);
            whole.drain(..old);
            whole
        } else {
            chunk[keep_from..].to_vec()
        };
        Ok(chunk.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One pass over the bytes instead of one substring search per prefix: this runs on every
/// line of every log, so the common case (no token anywhere) must stay cheap.
fn has_token_prefix(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        PREFIX_FIRST_BYTES[usize::from(*b)]
            && TOKEN_PREFIXES
                .iter()
                .any(|p| bytes[i..].starts_with(p.as_bytes()))
    })
}

/// Which bytes start some token prefix, derived from [`TOKEN_PREFIXES`] at compile time.
const PREFIX_FIRST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < TOKEN_PREFIXES.len() {
        table[TOKEN_PREFIXES[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

/// A token prefix followed by a body long enough to be masked.
fn has_token_shape(text: &str) -> bool {
    TOKEN_PREFIXES.iter().any(|prefix| {
        text.match_indices(prefix).any(|(at, _)| {
            text[at + prefix.len()..]
                .chars()
                .take_while(|c| is_token_char(*c))
                .take(MIN_TOKEN_BODY)
                .count()
                >= MIN_TOKEN_BODY
        })
    })
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'
}

fn mask_token_shapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // A prefix counts only at the start of a word: `sk-` inside `task-0193…` (a task id) is
    // no key.
    let mut prev: Option<char> = None;
    'outer: while !rest.is_empty() {
        let at_word_start = prev.is_none_or(|c| !c.is_alphanumeric());
        for prefix in TOKEN_PREFIXES.iter().filter(|_| at_word_start) {
            if let Some(after) = rest.strip_prefix(prefix) {
                let body_len: usize = after
                    .chars()
                    .take_while(|c| is_token_char(*c))
                    .map(char::len_utf8)
                    .sum();
                if body_len >= MIN_TOKEN_BODY {
                    out.push_str(MASK);
                    rest = &after[body_len..];
                    prev = MASK.chars().last();
                    continue 'outer;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
            prev = Some(c);
        }
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(redactor: &Redactor, input: &str, want: &str) {
        assert_eq!(redactor.redact(input), want, "input: {input}");
    }

    #[test]
    fn known_values_and_token_shapes_are_masked() {
        let r =
            Redactor::new().with_secret_env([("ANTHROPIC_API_KEY", "sk-fake"), ("HOME", "/root")]);
        check(&r, "key sk-fake used", "key [REDACTED] used");
        check(&r, "home /root kept", "home /root kept");
        check(
            &r,
            "token sk-ant-abcdefghijklmnop1234 end",
            "token [REDACTED] end",
        );
        check(
            &r,
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
            "Authorization: [REDACTED]",
        );
        check(&r, "AIzaSyA1234567890abcdefgh", "[REDACTED]");
        check(&r, "risk-assessment is a word", "risk-assessment is a word");
        check(&r, "ünïcode ghp_short stays", "ünïcode ghp_short stays");
        // Prefixes inside a word are no token: task ids, `mask-`, `desk-…`.
        check(
            &r,
            "task task-01a21218-8a80-7203 on forge/task-01a21218-8a80-7203",
            "task task-01a21218-8a80-7203 on forge/task-01a21218-8a80-7203",
        );
        check(
            &r,
            "key=sk-abcdefghijklmnop1234 (sk-abcdefghijklmnop1234)",
            "key=[REDACTED] ([REDACTED])",
        );
    }

    #[test]
    fn would_redact_sees_secrets_anywhere_in_a_serialised_value() {
        let r = Redactor::new().with_secret_env([("API_KEY", "hunter2-secret")]);
        let check = |value: serde_json::Value, expected: bool| {
            assert_eq!(r.would_redact(&value), expected, "{value}");
            let text = value.to_string();
            assert_eq!(
                r.redact(&text) != text,
                expected,
                "agrees with redact: {text}"
            );
            assert_eq!(r.has_secret(&text), expected, "{text}");
        };
        let long = "x".repeat(100_000);
        check(
            serde_json::json!({"a": "plain", "b": [1, 2, long.clone()]}),
            false,
        );
        check(
            serde_json::json!({"a": format!("{long}hunter2-secret{long}")}),
            true,
        );
        check(serde_json::json!({"k": "hunter2-secret"}), true);
        check(
            serde_json::json!(["x", format!("Bearer {}", "a".repeat(20))]),
            true,
        );
        check(serde_json::json!({"sk-": "sk-short"}), false);
        // Split across serde's write calls: a key, then its value.
        check(serde_json::json!({"hunter2": "-secret"}), false);
    }

    #[test]
    fn nothing_to_mask_borrows() {
        let r = Redactor::new();
        assert!(matches!(r.redact("plain"), Cow::Borrowed(_)));
    }
}
