//! Task classification and model choice.
//!
//! The rule, in order:
//! 1. `--type` (the override) wins.
//! 2. A leading verb decides ("Implement error handling" is an IMPLEMENT even though it says
//!    "error"; "Create a fix for …" is a CREATE): the first word, after a polite "please", is
//!    looked up in [`LEADING_VERBS`].
//! 3. Otherwise the first row of [`KEYWORDS`] with a keyword anywhere in the text, in the
//!    seed's order FIX, CREATE, REFACTOR ("The JWT test is failing" is a FIX).
//! 4. Otherwise IMPLEMENT.
//!
//! Matching is on whole lower-case words (so "prefix" is not "fix", "newline" not "new",
//! "address" not "add"); a keyword of several words matches consecutive words.

use super::kind::TaskType;

/// First-word verbs that name the task type outright.
pub const LEADING_VERBS: &[(TaskType, &[&str])] = &[
    (
        TaskType::Fix,
        &["fix", "repair", "resolve", "debug", "patch", "correct"],
    ),
    (
        TaskType::Create,
        &[
            "create",
            "scaffold",
            "generate",
            "bootstrap",
            "initialize",
            "init",
        ],
    ),
    (
        TaskType::Refactor,
        &[
            "refactor",
            "rename",
            "extract",
            "restructure",
            "reorganize",
            "simplify",
            "clean",
            "tidy",
            "move",
            "split",
            "inline",
        ],
    ),
    (
        TaskType::Implement,
        &[
            "implement",
            "build",
            "support",
            "integrate",
            "enable",
            "write",
        ],
    ),
];

/// Keywords anywhere in the text; rows are tried in this order.
pub const KEYWORDS: &[(TaskType, &[&str])] = &[
    (
        TaskType::Fix,
        &[
            "fix",
            "fixes",
            "fixed",
            "fixing",
            "bug",
            "bugs",
            "buggy",
            "failing",
            "fails",
            "failed",
            "failure",
            "broken",
            "error",
            "errors",
            "crash",
            "crashes",
            "regression",
        ],
    ),
    (
        TaskType::Create,
        &[
            "create",
            "creates",
            "creating",
            "new",
            "scaffold",
            "add file",
            "add a file",
            "add files",
            "from scratch",
        ],
    ),
    (
        TaskType::Refactor,
        &[
            "refactor",
            "refactoring",
            "rename",
            "renaming",
            "clean up",
            "cleanup",
            "extract",
            "restructure",
            "deduplicate",
        ],
    ),
];

/// The task type of `text`, `overridden` winning.
pub fn classify(text: &str, overridden: Option<TaskType>) -> TaskType {
    if let Some(t) = overridden {
        return t;
    }
    let words = words(text);
    let first = match words.as_slice() {
        [please, next, ..] if please == "please" => Some(next),
        [first, ..] => Some(first),
        [] => None,
    };
    if let Some(first) = first {
        for (t, verbs) in LEADING_VERBS {
            if verbs.contains(&first.as_str()) {
                return *t;
            }
        }
    }
    for (t, keywords) in KEYWORDS {
        if keywords.iter().any(|k| contains_phrase(&words, k)) {
            return *t;
        }
    }
    TaskType::Implement
}

/// The model for a run of this task type: FIX uses the provider's `fix_model` (cheaper, the
/// seed's `haiku`), falling back to `model`; the others use `model`. `None` means the CLI's
/// own default.
pub fn choose_model(
    task_type: TaskType,
    model: Option<&str>,
    fix_model: Option<&str>,
) -> Option<String> {
    let chosen = match task_type {
        TaskType::Fix => fix_model.or(model),
        _ => model,
    };
    chosen.map(str::to_owned)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn contains_phrase(words: &[String], phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    words
        .windows(parts.len())
        .any(|w| w.iter().zip(&parts).all(|(a, b)| a == b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: TaskType) {
        assert_eq!(classify(input, None), expected, "{input:?}");
    }

    #[test]
    fn classification_table() {
        use TaskType::*;
        for (input, expected) in [
            // Keywords anywhere.
            ("The JWT test is failing", Fix),
            ("Login crashes on empty password", Fix),
            ("There is a bug in the parser", Fix),
            ("Handle the error when the file is missing", Fix),
            ("Make a new module for billing", Create),
            ("Add a file with the default settings", Create),
            ("Project layout from scratch", Create),
            ("Please clean up the handlers", Refactor),
            ("The handlers need some cleanup", Refactor),
            // Leading verbs win over later keywords.
            ("Fix the failing JWT test", Fix),
            ("fix: login", Fix),
            ("Implement user authentication with JWT tokens", Implement),
            ("Implement error handling for uploads", Implement),
            ("Create a fix for the broken link", Create),
            ("Scaffold a CLI", Create),
            ("Rename foo to bar", Refactor),
            ("Extract the parser into its own module", Refactor),
            ("Refactor the new API", Refactor),
            ("please fix the tests", Fix),
            // Nothing matches: IMPLEMENT.
            ("Add logging to the server", Implement),
            ("", Implement),
            // Look-alikes that must not fire.
            ("Prefix the log lines with the run id", Implement),
            ("Strip the newline at the end", Implement),
            ("Validate the address field", Implement),
            ("Use the renewed certificate", Implement),
            ("Report a terrorist-free summary", Implement),
            ("Prefixes and suffixes for ids", Implement),
            ("Make the debugger output quieter", Implement),
            ("Use an extractor for headers", Implement),
        ] {
            check(input, expected);
        }
    }

    #[test]
    fn the_override_wins() {
        assert_eq!(
            classify("Fix the bug", Some(TaskType::Refactor)),
            TaskType::Refactor
        );
        assert_eq!(
            classify("anything", Some(TaskType::Create)),
            TaskType::Create
        );
    }

    #[test]
    fn model_choice() {
        use TaskType::*;
        for (t, model, fix_model, expected) in [
            (Fix, Some("sonnet"), Some("haiku"), Some("haiku")),
            (Fix, Some("sonnet"), None, Some("sonnet")),
            (Fix, None, None, None),
            (Implement, Some("sonnet"), Some("haiku"), Some("sonnet")),
            (Create, None, Some("haiku"), None),
            (Refactor, Some("sonnet"), Some("haiku"), Some("sonnet")),
        ] {
            assert_eq!(
                choose_model(t, model, fix_model).as_deref(),
                expected,
                "{t} {model:?} {fix_model:?}"
            );
        }
    }
}
