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
    fn nothing_to_mask_borrows() {
        let r = Redactor::new();
        assert!(matches!(r.redact("plain"), Cow::Borrowed(_)));
    }
}
