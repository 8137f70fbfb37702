//! Text to search terms, the same way for a file and for a task: words and identifiers
//! are split into their parts (`parse_json_body` and `parseJsonBody` both give `parse`,
//! `json`, `body`) and kept whole when they have several (`parse_json_body`), lowercased,
//! with a light stemmer so `routes`, `routing` and `route` meet. Words that say nothing
//! about a file (English glue, keywords, a commit subject's verbs) are dropped.

use std::collections::BTreeMap;

/// Terms shorter than this are noise (`a`, `x`, `i`).
const MIN_LEN: usize = 2;
/// Longer tokens are data (hashes, base64), not words.
const MAX_LEN: usize = 40;

const STOP: &[&str] = &[
    "the", "and", "for", "with", "from", "that", "this", "into", "onto", "are", "was", "were",
    "not", "but", "all", "any", "can", "its", "our", "you", "your", "use", "using", "used", "when",
    "then", "than", "there", "their", "them", "these", "those", "have", "has", "had", "will",
    "would", "should", "could", "may", "might", "must", "also", "only", "just", "very", "more",
    "most", "some", "such", "each", "other", "out", "off", "over", "under", "about", "after",
    "before", "between", "via", "per", "been", "being", "which", "what", "who", "how", "why",
    "where", "does", "did", "done", "doing", "now", "new", "to", "of", "in", "on", "at", "by",
    "or", "an", "be", "is", "it", "as", "if", "so", "no", "do", "we", "up", "fn", "let", "mut",
    "pub", "self", "return", "else", "def", "var", "const", "func", "true", "false", "none",
    "null", "nil", "impl", "import", "package", "struct", "class", "type", "http", "https", "www",
    "com", "github",
];

/// Words of a commit subject or task that name no part of a repository.
const TASK_STOP: &[&str] = &[
    "add",
    "added",
    "adds",
    "fix",
    "fixed",
    "fixes",
    "remove",
    "removed",
    "update",
    "updated",
    "updates",
    "support",
    "allow",
    "make",
    "change",
    "changed",
    "improve",
    "instead",
    "don",
    "doesn",
    "isn",
    "won",
    "please",
    "implement",
    "ensure",
    "properly",
    "correctly",
    "bump",
    "minor",
    "small",
    "some",
    "pr",
    "issue",
    "closes",
    "via",
    "version",
    "release",
    "docs",
];

/// The terms of `text` with how often each occurs.
pub fn count(text: &str) -> Vec<(String, u32)> {
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    each(text, |t| *counts.entry(t).or_default() += 1);
    counts.into_iter().collect()
}

/// The distinct terms of a task's text (its verbs like "add" or "fix" left out).
pub fn of_task(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    each(text, |t| {
        if !TASK_STOP.iter().any(|w| stem(w) == t) && !seen.contains(&t) {
            seen.push(t);
        }
    });
    seen
}

/// The terms of a path: its components' words (`src/routing/method_routing.rs` gives
/// `src`, `rout`, `method`, `method_rout`, `rs`).
pub fn of_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    each(path, |t| out.push(t));
    out
}

/// The terms of one identifier (a definition's name).
pub fn of_identifier(name: &str) -> Vec<String> {
    of_path(name)
}

/// Calls `emit` with each term of `text`, in order.
fn each(text: &str, mut emit: impl FnMut(String)) {
    for token in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if token.is_empty() || token.len() > MAX_LEN {
            continue;
        }
        let parts = split_identifier(token);
        if parts.len() > 1 {
            let whole: Vec<String> = parts.iter().map(|p| stem(p)).collect();
            push(&whole.join("_"), &mut emit);
        }
        for p in parts.iter().filter(|p| !STOP.contains(&p.as_str())) {
            push(&stem(p), &mut emit);
        }
    }
}

fn push(term: &str, emit: &mut impl FnMut(String)) {
    if term.chars().count() < MIN_LEN
        || term.chars().all(|c| c.is_ascii_digit())
        || STOP.contains(&term)
    {
        return;
    }
    emit(term.to_owned());
}

/// `parse_json_body`, `parseJSONBody`, `ParseJsonBody` → `parse`, `json`, `body`
/// (lowercased).
fn split_identifier(token: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in token.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // A lower→Upper step starts a word (`parseJson`), and so does the last capital
            // of a run followed by a lowercase letter (`JSONBody` → `JSON`, `Body`).
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if boundary {
                parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        parts.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    parts
}

/// A light suffix stripper (not Porter: enough for `routes`/`routing`/`routed` → `rout`,
/// `queries` → `query`), applied alike to files and tasks.
fn stem(word: &str) -> String {
    let w = word;
    let n = w.len();
    if !w.is_ascii() {
        return w.to_owned();
    }
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..n - 3]);
    }
    if n > 5 && w.ends_with("ing") {
        return trim_e(&w[..n - 3]);
    }
    if n > 4 && w.ends_with("ed") && !w.ends_with("eed") {
        return trim_e(&w[..n - 2]);
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return trim_e(&w[..n - 1]);
    }
    trim_e(w)
}

/// `route` and `rout(ing)` meet at `rout`.
fn trim_e(w: &str) -> String {
    if w.len() > 3 && w.ends_with('e') {
        w[..w.len() - 1].to_owned()
    } else {
        w.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: &[&str]) {
        let got = of_path(text);
        assert_eq!(got, expected, "{text}");
    }

    #[test]
    fn identifiers_split_into_their_parts_and_stay_whole() {
        check(
            "parse_json_body",
            &["pars_json_body", "pars", "json", "body"],
        );
        check("parseJSONBody", &["pars_json_body", "pars", "json", "body"]);
        check("HttpServer", &["http_server", "server"]);
        check("src/routing/mod.rs", &["src", "rout", "mod", "rs"]);
        check("routes route routed", &["rout", "rout", "rout"]);
        check("queries", &["query"]);
        // look-alikes that must stay as they are
        check("class status bus", &["status", "bus"]);
        check("a b 42 deadbeef", &["deadbeef"]);
        check("Größe", &["größe"]);
    }

    #[test]
    fn task_terms_drop_the_verbs_and_repeat_nothing() {
        assert_eq!(
            of_task("Fix: add `Router::with_state` support for routers"),
            vec!["router", "with_stat", "stat"]
        );
        assert!(of_task("fix typo").contains(&"typo".to_owned()));
        assert!(of_task("add fix update").is_empty());
    }

    #[test]
    fn counts_are_per_term() {
        assert_eq!(
            count("Router router ROUTER json"),
            vec![("json".to_owned(), 1), ("router".to_owned(), 3)]
        );
    }
}
