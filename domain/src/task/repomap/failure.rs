//! The map in a correction prompt: when a validation failure names the repository's files
//! (by their path from the root, as compilers and tracebacks print them) or identifiers it
//! defines, a short map ranked by the failure's text points the agent at the code involved
//! — the files named first, then what the ranking adds (the code they use). A failure that
//! names nothing of the repository (a missing tool, a timeout) gets no map: it would only
//! repeat the instruction file's.

use std::collections::BTreeSet;

use super::{FileTags, Ranked, RepoMap, lexical, rank, render};

/// The correction map's size (characters): a third of the instruction file's default, the
/// prompt's room goes to the failure itself.
pub const FAILURE_MAP_CHARS: usize = 1_000;

/// A path shorter than this (`a.c`) matches too much text by chance.
const MIN_PATH: usize = 4;

/// The indices of the files whose path `failure` contains (after a `/`, a space, a quote
/// or at its start, so `src/lib.rs` is not found inside `xsrc/lib.rs`).
pub fn named_files(files: &[FileTags], failure: &str) -> BTreeSet<usize> {
    files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.path.len() >= MIN_PATH && mentions(failure, &f.path))
        .map(|(i, _)| i)
        .collect()
}

fn mentions(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + path.len()..].chars().next();
        let starts =
            before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'));
        let ends = after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        starts && ends
    })
}

/// The map of `files` ranked by `failure` within `budget`, or `None` when the failure names
/// no file and no identifier of the repository.
pub fn failure_map(files: &[FileTags], failure: &str, budget: usize) -> Option<RepoMap> {
    let named = named_files(files, failure);
    if named.is_empty() && lexical::named_identifiers(files, failure).is_empty() {
        return None;
    }
    let mut ranked = rank(files, failure);
    // The files the failure names come first (in the ranking's order), whatever their score.
    for &i in &named {
        if !ranked.iter().any(|r| r.index == i) {
            ranked.push(Ranked {
                index: i,
                score: 0.0,
                lexical: 0.0,
                graph: 0.0,
            });
        }
    }
    ranked.sort_by_key(|r| !named.contains(&r.index));
    Some(render::render_for(
        files,
        &ranked,
        failure,
        "the failure",
        budget,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::repomap::{DefKind, Definition, terms};

    fn file(path: &str, defs: &[&str], refs: &[&str]) -> FileTags {
        FileTags {
            path: path.to_owned(),
            defs: defs
                .iter()
                .map(|n| Definition {
                    name: (*n).to_owned(),
                    kind: DefKind::Function,
                    line: 3,
                    signature: format!("pub fn {n}()"),
                })
                .collect(),
            refs: refs.iter().map(|r| ((*r).to_owned(), 1)).collect(),
            terms: terms::count(&defs.join(" ")),
        }
    }

    fn repo() -> Vec<FileTags> {
        vec![
            file("src/lib.rs", &["run"], &["parse_config"]),
            file("src/config.rs", &["parse_config"], &[]),
            file("src/report.rs", &["render_table"], &[]),
            file("tests/app.py", &["test_totals"], &["render_table"]),
        ]
    }

    #[test]
    fn check_named_files() {
        // (failure text, the files it names)
        let cases: &[(&str, &[&str])] = &[
            (
                "error[E0308]: mismatched types\n --> src/config.rs:12:5",
                &["src/config.rs"],
            ),
            (
                "  File \"/tmp/wt/task-1/tests/app.py\", line 4, in test_totals",
                &["tests/app.py"],
            ),
            (
                "FAILED tests/app.py::test_totals - AssertionError",
                &["tests/app.py"],
            ),
            // look-alikes: a longer path, another extension, a word
            ("see xsrc/config.rs and src/config.rsx", &[]),
            ("the config is wrong", &[]),
        ];
        let files = repo();
        for (text, expected) in cases {
            let got: Vec<&str> = named_files(&files, text)
                .into_iter()
                .map(|i| files[i].path.as_str())
                .collect();
            assert_eq!(&got, expected, "{text}");
        }
    }

    #[test]
    fn a_failure_naming_the_repository_gets_a_map_led_by_the_named_file() {
        let files = repo();
        let map = failure_map(
            &files,
            "error[E0425]: cannot find value `cfg`\n --> src/config.rs:4:9",
            FAILURE_MAP_CHARS,
        )
        .unwrap();
        assert_eq!(map.files[0], "src/config.rs", "{map:?}");
        assert!(
            map.text
                .starts_with("4 files; most relevant to the failure first")
        );
        assert!(map.text.chars().count() <= FAILURE_MAP_CHARS);
        // an identifier the repository defines is enough
        let by_name = failure_map(&files, "assert render_table(rows) == 3", 200).unwrap();
        assert_eq!(by_name.files[0], "src/report.rs", "{by_name:?}");
        assert!(by_name.text.chars().count() <= 200);
    }

    #[test]
    fn a_failure_naming_nothing_of_the_repository_gets_none() {
        let files = repo();
        for text in [
            "sh: 1: cargo: not found",
            "(forge: stopped after 600000 ms, the step's timeout)",
            "",
        ] {
            assert_eq!(failure_map(&files, text, FAILURE_MAP_CHARS), None, "{text}");
        }
    }
}
