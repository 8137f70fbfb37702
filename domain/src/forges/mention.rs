//! Whether a comment addresses forge: it mentions the handle (`@forge` unless configured)
//! as a word of its own, outside quoted lines and code.

/// The handle a comment names to ask forge for something.
pub const DEFAULT_HANDLE: &str = "forge";

/// Whether `body` mentions `@handle`: the `@` starts the text or follows a character that
/// cannot be part of an e-mail address or another handle, and the handle is not followed by
/// a character a longer handle could have (`@forgebot`, `@forge-ci`). Lines quoted with `>`
/// (a reply that quotes an earlier mention) and code (fenced blocks and `inline spans`) do
/// not count: quoting forge's own instructions must not trigger it. Case-insensitive, as the
/// forges' handles are.
pub fn mentions(body: &str, handle: &str) -> bool {
    mention_positions(body, handle).next().is_some()
}

/// The text after the first mention on its line, trimmed: `@forge add a test` → `add a
/// test`. `None` when there is no mention or nothing follows it.
pub fn task_after_mention(body: &str, handle: &str) -> Option<String> {
    let (line, end) = mention_positions(body, handle).next()?;
    let rest = line[end..].trim_start_matches([':', ',']).trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// Each line with a mention and the byte offset just after it.
fn mention_positions<'b>(body: &'b str, handle: &'b str) -> impl Iterator<Item = (&'b str, usize)> {
    let needle = format!("@{}", handle.to_ascii_lowercase());
    let mut fenced = false;
    body.lines().filter_map(move |line| {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            return None;
        }
        if fenced || trimmed.starts_with('>') || handle.is_empty() {
            return None;
        }
        let lower = line.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find(&needle) {
            let start = from + at;
            let end = start + needle.len();
            from = end;
            let before_ok = lower[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '/')));
            let after_ok = lower[end..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '/')));
            let in_code = lower[..start].matches('`').count() % 2 == 1;
            if before_ok && after_ok && !in_code {
                return Some((line, end));
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, want: bool) {
        assert_eq!(mentions(body, "forge"), want, "{body:?}");
    }

    #[test]
    fn mentions_and_look_alikes() {
        check("@forge please add a test", true);
        check("Looks wrong. @forge fix the off-by-one", true);
        check("@Forge, rename this", true);
        check("(@forge) see above", true);
        check("thanks!\n\n@forge: handle the empty case", true);
        check("@forge.", true);
        // Look-alikes that must not fire.
        check("@forgebot please add a test", false);
        check("@forge-ci rerun", false);
        check("mail me at bot@forge.dev", false);
        check("see org/@forge/x", false);
        check("> @forge fix it\n\nI agree with the above", false);
        check("run `@forge fix` to ask it", false);
        check("```\n@forge fix\n```\nno mention outside", false);
        check("forge should fix this", false);
        check("", false);
    }

    #[test]
    fn a_configured_handle_and_the_task_after_it() {
        assert!(mentions("@helper do it", "helper"));
        assert!(!mentions("@forge do it", "helper"));
        assert!(!mentions("@forge do it", ""));
        assert_eq!(
            task_after_mention("@forge: add a test for the empty list", "forge").as_deref(),
            Some("add a test for the empty list")
        );
        assert_eq!(
            task_after_mention("nice\n@forge   handle None\nthanks", "forge").as_deref(),
            Some("handle None")
        );
        assert_eq!(task_after_mention("@forge", "forge"), None);
        assert_eq!(task_after_mention("no mention", "forge"), None);
    }
}
