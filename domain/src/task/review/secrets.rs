//! Secrets in added lines: provider token formats, private-key blocks, random-looking values
//! assigned to `*KEY`/`*SECRET`/`*PASSWORD`/`*TOKEN` names, and registry tokens in `.npmrc`/
//! `.pypirc`. A value that is a placeholder (`changeme`, `${VAR}`, `xxx`, `<token>`) or an
//! environment lookup (`os.environ[…]`, `process.env.X`, `env::var(…)`) never fires.

use super::input::{AddedLine, ChangedFile};
use super::text::{entropy, is_placeholder, looks_random, run_of, starts_of};
use super::{finding, rule};
use crate::task::finding::{Finding, Severity};

const REGISTRY_CONFIGS: &[&str] = &[".npmrc", ".pypirc", ".yarnrc", ".yarnrc.yml", ".gemrc"];
const REGISTRY_TOKEN_KEYS: &[&str] = &["_authtoken", "_auth", "_password", "password", "token"];

/// The last word of a name that makes its value a secret (`API_KEY`, `clientSecret`, …).
const SECRET_NAME_WORDS: &[&str] = &[
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "pwd",
    "token",
    "secretkey",
    "accesskey",
    "authtoken",
    "privatekey",
];

/// One line: the first token rule that matches, else the assigned-value rule.
pub fn check_line(path: &str, line: &AddedLine, out: &mut Vec<Finding>) {
    let text = line.text.as_str();
    let at = Some(line.line);
    if let Some((rule, what)) = token(text) {
        out.push(finding(rule, path, at, format!("{what} in an added line")));
    } else if let Some((name, _)) = assigned_secret(text) {
        out.push(finding(
            rule::ASSIGNED_SECRET,
            path,
            at,
            format!(
                "random-looking literal assigned to `{name}`; read it from the environment instead"
            ),
        ));
    }
}

/// The literal values the assigned-value rule fires on in an added line, so that a caller
/// showing other text about the change (an agent's review quoting the line) can mask them
/// as well; token shapes (`AKIA…`, `ghp_…`, `sk-…`) the [`crate::Redactor`] masks itself.
pub fn secret_values(text: &str) -> Vec<&str> {
    assigned_secret(text)
        .map(|(_, value)| value)
        .into_iter()
        .collect()
}

/// `.npmrc`, `.pypirc` and friends with a literal token in an added line.
pub fn check_file(file: &ChangedFile, out: &mut Vec<Finding>) {
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    if !REGISTRY_CONFIGS.contains(&name) {
        return;
    }
    let hit = file.added_lines.iter().find(|l| {
        // `.npmrc` keys hold `:` (`//host/:_authToken=…`), so `=` first, then `:`.
        let Some((key, value)) = l.text.split_once('=').or_else(|| l.text.split_once(':')) else {
            return false;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim().trim_matches(['"', '\'']);
        REGISTRY_TOKEN_KEYS.iter().any(|k| key.ends_with(k))
            && !value.is_empty()
            && !is_placeholder(value)
    });
    if let Some(line) = hit {
        out.push(finding(
            rule::PACKAGE_TOKEN,
            &file.path,
            Some(line.line),
            format!("{name} holds a literal registry credential"),
        ));
    }
}

type Rule = (&'static str, Severity);

/// Every token format starts with `-----BEGIN `, `AKIA`, `ASIA`, `AIza`, `gh?_`,
/// `github_pat_`, `sk-` or `xox`: one pass over the bytes, dispatched on the first byte, rules
/// most lines out before the per-format searches.
fn may_hold_token(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        let rest = &bytes[i + 1..];
        match b {
            b'-' => rest.starts_with(b"----BEGIN "),
            b'A' => {
                rest.starts_with(b"KIA") || rest.starts_with(b"SIA") || rest.starts_with(b"Iza")
            }
            b'g' => {
                rest.starts_with(b"ithub_pat_")
                    || (rest.len() > 2
                        && rest[0] == b'h'
                        && matches!(rest[1], b'p' | b'o' | b'u' | b's' | b'r')
                        && rest[2] == b'_')
            }
            b's' => rest.starts_with(b"k-"),
            b'x' => rest.starts_with(b"ox"),
            _ => false,
        }
    })
}

/// A provider token format in `text`: the rule and what it found.
fn token(text: &str) -> Option<(Rule, &'static str)> {
    if !may_hold_token(text) {
        return None;
    }
    if text.contains("-----BEGIN ")
        && (text.contains("PRIVATE KEY-----") || text.contains("PRIVATE KEY BLOCK-----"))
    {
        return Some((rule::PRIVATE_KEY_BLOCK, "private key block"));
    }
    if aws_key(text) {
        return Some((rule::AWS_KEY, "AWS access key id"));
    }
    let b64ish = |c: char| c.is_ascii_alphanumeric();
    let b64url = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        if any_token(text, prefix, 36, b64ish) {
            return Some((rule::GITHUB_TOKEN, "GitHub token"));
        }
    }
    if any_token(text, "github_pat_", 22, |c| {
        c.is_ascii_alphanumeric() || c == '_'
    }) {
        return Some((rule::GITHUB_TOKEN, "GitHub fine-grained token"));
    }
    if any_token(text, "sk-ant-", 20, b64url) {
        return Some((rule::ANTHROPIC_KEY, "Anthropic API key"));
    }
    if starts_of(text, "sk-")
        .any(|i| !text[i..].starts_with("sk-ant-") && token_at(text, i + 3, 20, b64url))
    {
        return Some((rule::OPENAI_KEY, "OpenAI-style secret key"));
    }
    for prefix in ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"] {
        if any_token(text, prefix, 10, |c| c.is_ascii_alphanumeric() || c == '-') {
            return Some((rule::SLACK_TOKEN, "Slack token"));
        }
    }
    if any_token(text, "AIza", 35, b64url) {
        return Some((rule::GOOGLE_API_KEY, "Google API key"));
    }
    None
}

fn any_token(text: &str, prefix: &str, min: usize, ok: impl Fn(char) -> bool + Copy) -> bool {
    starts_of(text, prefix).any(|i| token_at(text, i + prefix.len(), min, ok))
}

/// At least `min` token characters from `start`, random-looking and not a placeholder.
fn token_at(text: &str, start: usize, min: usize, ok: impl Fn(char) -> bool) -> bool {
    let body = run_of(text, start, ok);
    body.len() >= min && looks_random(body) && !is_placeholder(body)
}

/// `AKIA`/`ASIA` and exactly 16 more of `[A-Z0-9]`; AWS's documentation key (…`EXAMPLE`)
/// does not count.
fn aws_key(text: &str) -> bool {
    ["AKIA", "ASIA"].into_iter().any(|prefix| {
        starts_of(text, prefix).any(|i| {
            let body = run_of(text, i + 4, |c| {
                c.is_ascii_uppercase() || c.is_ascii_digit()
            });
            body.len() == 16 && !body.ends_with("EXAMPLE")
        })
    })
}

/// `NAME = "value"`, `NAME: value`, `"name": "value"`, `NAME := value` where NAME's last word
/// is a secret word and the value is a random-looking literal. Returns the name and the value.
fn assigned_secret(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'=' && b != b':' {
            continue;
        }
        // Comparisons, `::` paths, `=>` arrows and the second char of `:=` are not assignments.
        let prev = i.checked_sub(1).map(|p| bytes[p]);
        let next = bytes.get(i + 1).copied();
        if matches!(prev, Some(b'=' | b'!' | b'<' | b'>' | b':'))
            || matches!(next, Some(b'=' | b':' | b'>')) && !(b == b':' && next == Some(b'='))
        {
            continue;
        }
        let Some(name) = name_before(&text[..i]) else {
            continue;
        };
        if !is_secret_name(name) {
            continue;
        }
        let after = text[i + 1..].trim_start_matches('=').trim_start();
        if let Some(value) = literal(after).filter(|v| is_secret_value(v)) {
            return Some((name, value));
        }
    }
    None
}

/// The identifier right before an assignment sign, quotes and spaces skipped.
fn name_before(before: &str) -> Option<&str> {
    let trimmed = before.trim_end().trim_end_matches(['"', '\'']);
    let start = trimmed
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map_or(0, |(p, c)| p + c.len_utf8());
    let name = &trimmed[start..];
    (!name.is_empty()).then_some(name)
}

fn is_secret_name(name: &str) -> bool {
    let last = last_word(name);
    SECRET_NAME_WORDS
        .iter()
        .any(|w| last.eq_ignore_ascii_case(w))
}

/// The last word of `snake_case`, `kebab-case`, `dotted.name` or `camelCase`.
fn last_word(name: &str) -> &str {
    let tail = name.rsplit(['_', '-', '.']).next().unwrap_or(name);
    let bytes = tail.as_bytes();
    // camelCase: the last upper-case letter after a lower-case one starts the last word.
    let split = (1..bytes.len())
        .rev()
        .find(|&i| bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase());
    split.map_or(tail, |i| &tail[i..])
}

/// A quoted literal, or a bare value that ends the expression (not `self.token`,
/// `os.environ[…]`, `get()`, `env::var(…)`).
fn literal(after: &str) -> Option<&str> {
    let first = after.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let rest = &after[1..];
        return rest.find(first).map(|end| &rest[..end]);
    }
    let value = run_of(after, 0, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
    });
    let next = after[value.len()..].chars().next();
    let ends =
        next.is_none_or(|c| c.is_whitespace() || matches!(c, ',' | ';' | '#' | '}' | ')' | ']'));
    ends.then_some(value)
}

/// At least 12 characters, letters and digits, ≥ 3 bits of entropy per character, no space,
/// not a placeholder.
fn is_secret_value(value: &str) -> bool {
    value.len() >= 12
        && !value.contains(char::is_whitespace)
        && looks_random(value)
        && entropy(value) >= 3.0
        && !is_placeholder(value)
}

#[cfg(test)]
mod tests {
    use super::secret_values;
    use crate::task::review::tests::{check_line, file, rules};

    #[test]
    fn the_values_the_assigned_value_rule_fires_on() {
        for (text, expected) in [
            ("API_KEY = \"q8Zr2LmX0vKpW3sT\"", &["q8Zr2LmX0vKpW3sT"][..]),
            ("  clientSecret: 'Zx8Qw2Lm4Np6Rt0V',", &["Zx8Qw2Lm4Np6Rt0V"]),
            ("DB_PASSWORD=h7Gk2Lq9Xz4Vb1Nm", &["h7Gk2Lq9Xz4Vb1Nm"]),
            // Look-alikes: a placeholder, an environment lookup, a word, a non-secret name.
            ("API_KEY = \"changeme\"", &[]),
            ("API_KEY = os.environ[\"API_KEY\"]", &[]),
            ("PASSWORD = \"password\"", &[]),
            ("build_id = \"q8Zr2LmX0vKpW3sT\"", &[]),
        ] {
            assert_eq!(secret_values(text), expected, "{text}");
        }
    }

    #[test]
    fn secret_line_rules() {
        for (text, expected) in [
            (
                "aws_id = AKIAZ7Q4R2W9X3YT5PLM",
                &["secret.aws_access_key"][..],
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----",
                &["secret.private_key_block"],
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                &["secret.private_key_block"],
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----",
                &["secret.private_key_block"],
            ),
            (
                "token: ghp_8fK2mQ9xLr4Tz7Vb1Nc6Wd3Ye5Ua0Hs2Jp4G",
                &["secret.github_token"],
            ),
            (
                "GH=github_pat_11ABCDE2F0q9Wx7Yz3Lm5N_8kP4rS6tU1vW2xY3zA",
                &["secret.github_token"],
            ),
            (
                "key = \"sk-ant-api03-Zx8Qw2Lm4Np6Rt0Vy3Bc7Df9\"",
                &["secret.anthropic_key"],
            ),
            (
                "OPENAI=sk-proj-4fG8hJ2kL6mN0pQ3rS7tU9vW",
                &["secret.openai_key"],
            ),
            ("slack: xoxb-2048-8f3K9qL2mZ7x", &["secret.slack_token"]),
            (
                "maps = 'AIzaSyB3k9Xq2Lm7Np4Rt8Vw1Yz6Cd0Fg5Hj2Kl'",
                &["secret.google_api_key"],
            ),
            ("API_KEY = \"q8Zr2LmX0vKpW3sT\"", &["secret.assigned_value"]),
            ("DB_PASSWORD=hX9kQ2mZ7rL4pW1v", &["secret.assigned_value"]),
            (
                "\"clientSecret\": \"a7Fq2Lz9Xk3Mw8Rt\",",
                &["secret.assigned_value"],
            ),
            (
                "authToken := \"Zk4mQ8xL2pR7vT1w\"",
                &["secret.assigned_value"],
            ),
            (
                "export STRIPE_SECRET=\"rk9Lq2Zx7Mw4Pt8V\"",
                &["secret.assigned_value"],
            ),
            (
                "self.api_key = 'Tq7Wm2Xz9Lk4Rp8N'",
                &["secret.assigned_value"],
            ),
            // Look-alikes that must not fire.
            ("aws_id = AKIAIOSFODNN7EXAMPLE", &[]),
            ("prefix = AKIAshort", &[]),
            ("-----BEGIN PUBLIC KEY-----", &[]),
            ("-----BEGIN CERTIFICATE-----", &[]),
            ("// see ghp_ tokens in the docs", &[]),
            ("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", &[]),
            ("run task-list sk-ant-placeholder", &[]),
            ("let disk-usage-report-2024-quarterly = 1", &[]),
            ("OPENAI_API_KEY=sk-your-key-here-replace-me", &[]),
            ("xoxb-", &[]),
            ("API_KEY=${API_KEY}", &[]),
            ("API_KEY = os.environ[\"API_KEY\"]", &[]),
            ("const apiKey = process.env.API_KEY;", &[]),
            ("let token = env::var(\"TOKEN\")?;", &[]),
            ("password = \"changeme\"", &[]),
            ("PASSWORD=changeme123456", &[]),
            ("SECRET_KEY=\"<your secret key>\"", &[]),
            ("token = \"xxxxxxxxxxxxxxxx\"", &[]),
            ("api_key = get_api_key(config)", &[]),
            ("token = self.token", &[]),
            ("primary_key = \"user_id\"", &[]),
            ("sort_key = \"created_at_desc\"", &[]),
            ("max_tokens = 4096", &[]),
            ("token_count = \"a8Kq2Lz9Xm3Wr7Tp\"", &[]),
            ("monkey = \"a8Kq2Lz9Xm3Wr7Tp\"", &[]),
            ("if token == \"a8Kq2Lz9Xm3Wr7Tp\" {", &[]),
            ("let key: String = value;", &[]),
            ("PASSWORD=short1", &[]),
            ("é_token = \"a8Kq2Lz9Xm3Wr7Tp\"", &["secret.assigned_value"]),
            ("ключ: значение", &[]),
        ] {
            check_line("src/config.py", text, expected);
        }
    }

    #[test]
    fn registry_configs_with_literal_tokens() {
        for (path, lines, expected) in [
            (
                ".npmrc",
                &["//registry.npmjs.org/:_authToken=npm_4fG8hJ2kL6mN0pQ3rS7tU9vW"][..],
                &["sensitive.package_registry_token", "secret.assigned_value"][..],
            ),
            (
                "pkg/.pypirc",
                &[
                    "[pypi]",
                    "username = __token__",
                    "password = pypi-AgEIcHlwaS5vcmc",
                ],
                &["sensitive.package_registry_token", "secret.assigned_value"],
            ),
            // Look-alikes: a registry URL, an environment placeholder, another file.
            (".npmrc", &["registry=https://npm.example.com/"], &[]),
            (
                ".npmrc",
                &["//registry.npmjs.org/:_authToken=${NPM_TOKEN}"],
                &[],
            ),
            ("docs/npmrc.md", &["Put _authToken=<token> in .npmrc"], &[]),
            (".pypirc", &["[pypi]", "username = __token__"], &[]),
        ] {
            assert_eq!(rules(&[file(path, lines)]), expected, "{path}: {lines:?}");
        }
    }
}
