//! Small text helpers the line rules share.

/// The byte offsets of `needle` in `hay` where the character before is not part of a word,
/// so `sk-` in `task-list` does not count.
pub(crate) fn starts_of<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    hay.match_indices(needle).map(|(i, _)| i).filter(move |&i| {
        hay[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// The run of characters from `start` that satisfy `ok`.
pub(crate) fn run_of(s: &str, start: usize, ok: impl Fn(char) -> bool) -> &str {
    let rest = s.get(start..).unwrap_or_default();
    let end = rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
    &rest[..end]
}

/// Shannon entropy in bits per character.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 128];
    let mut other = 0u32;
    let mut n = 0u32;
    for c in s.chars() {
        n += 1;
        match usize::try_from(u32::from(c)) {
            Ok(i) if i < 128 => counts[i] += 1,
            _ => other += 1,
        }
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts
        .iter()
        .chain(std::iter::once(&other))
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum()
}

/// Random-looking: letters and digits both present, and not one character repeated.
pub(crate) fn looks_random(s: &str) -> bool {
    let letters = s.chars().any(|c| c.is_ascii_alphabetic());
    let digits = s.chars().any(|c| c.is_ascii_digit());
    letters && digits && entropy(s) >= 3.0
}

/// Words of placeholder values that are not secrets.
const PLACEHOLDER_WORDS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "example",
    "placeholder",
    "your",
    "dummy",
    "redacted",
    "xxx",
    "***",
    "todo",
    "replace",
    "fake",
    "sample",
    "test",
    "<",
    "${",
    "{{",
    "$(",
    "%(",
];

pub(crate) fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    lower.starts_with('$') || PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w))
}

/// Shell command segments of a line: split at `;`, `&&`, `||` and `|`, each as its words with
/// quotes stripped.
pub(crate) fn commands(line: &str) -> Vec<Vec<String>> {
    line.split([';', '|', '&'])
        .map(|seg| {
            seg.split_whitespace()
                .map(|w| {
                    w.trim_matches(|c| c == '"' || c == '\'' || c == '`')
                        .to_owned()
                })
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

/// The words after a `program` word (`rm`, `/bin/rm`, `sudo rm`) in a command, if it is one.
pub(crate) fn args_of<'a>(words: &'a [String], program: &str) -> Option<&'a [String]> {
    let i = words
        .iter()
        .position(|w| w == program || w.rsplit('/').next() == Some(program))?;
    Some(&words[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(
            starts_of("task-list sk-1", "sk-").collect::<Vec<_>>(),
            vec![10]
        );
        assert_eq!(
            run_of("abc-d!x", 0, |c| c.is_alphanumeric() || c == '-'),
            "abc-d"
        );
        assert!(entropy("aaaa") < 0.01);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
        assert!(looks_random("q8Zr2LmX0vKp"));
        assert!(!looks_random("created_at_desc"));
        assert!(!looks_random("a1a1a1a1a1a1"));
        assert!(is_placeholder("${API_KEY}"));
        assert!(is_placeholder("your-token-here"));
        assert!(!is_placeholder("q8Zr2LmX0vKp"));
        assert_eq!(
            commands("cd x && rm -rf '/'"),
            vec![
                vec!["cd".to_owned(), "x".to_owned()],
                vec!["rm".into(), "-rf".into(), "/".into()]
            ]
        );
    }
}
