//! The ranking: lexical relevance (three-field BM25) mixed with the graph's personalised
//! PageRank, scaled by what the path says a file is (a lockfile or vendored code is
//! rarely what a task changes).

use std::cmp::Ordering;

use super::{FileTags, graph, lexical, terms};

/// The lexical score's share of the final score (both normalised to their maximum).
pub const LEXICAL_WEIGHT: f64 = 1.0;
/// The graph's share: enough to lift the code the matched files depend on above a file
/// that merely mentions a word, not enough to bury a file the task names.
pub const GRAPH_WEIGHT: f64 = 0.3;

/// One file's place in the ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// Its index in the files handed in.
    pub index: usize,
    pub score: f64,
    pub lexical: f64,
    pub graph: f64,
}

/// The files ordered by relevance to `task`, most relevant first (ties by path); files
/// with no relevance at all are left out unless nothing matched (then the most central
/// files come first, as in a map without a task).
pub fn rank(files: &[FileTags], task: &str) -> Vec<Ranked> {
    let query = terms::of_task(task);
    let lex = lexical::bm25f(files, &query);
    let named = lexical::named_identifiers(files, task);
    let edges = graph::edges(files, &named);
    let pr = graph::pagerank(&edges, &lex);
    let max_lex = lex.iter().copied().fold(0.0, f64::max);
    let max_pr = pr.iter().copied().fold(0.0, f64::max);
    let mut ranked: Vec<Ranked> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let l = if max_lex > 0.0 { lex[i] / max_lex } else { 0.0 };
            let g = if max_pr > 0.0 { pr[i] / max_pr } else { 0.0 };
            Ranked {
                index: i,
                score: prior(&f.path) * (LEXICAL_WEIGHT * l + GRAPH_WEIGHT * g),
                lexical: l,
                graph: g,
            }
        })
        .filter(|r| r.score > 0.0)
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| files[a.index].path.cmp(&files[b.index].path))
    });
    ranked
}

/// What a file's path says about how likely a task is to change it by hand.
pub fn prior(path: &str) -> f64 {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let generated = name.ends_with(".lock")
        || name == "package-lock.json"
        || name == "go.sum"
        || name.ends_with(".min.js")
        || name.ends_with(".map")
        || name.ends_with(".snap");
    let vendored = lower.split('/').any(|c| {
        matches!(
            c,
            "vendor" | "third_party" | "node_modules" | "dist" | "build"
        )
    });
    if generated || vendored { 0.2 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::repomap::{DefKind, Definition};

    fn file(path: &str, defs: &[&str], refs: &[&str], text: &str) -> FileTags {
        FileTags {
            path: path.to_owned(),
            defs: defs
                .iter()
                .map(|n| Definition {
                    name: (*n).to_owned(),
                    kind: DefKind::Type,
                    line: 1,
                    signature: format!("struct {n}"),
                })
                .collect(),
            refs: refs.iter().map(|r| ((*r).to_owned(), 1)).collect(),
            terms: terms::count(text),
        }
    }

    fn repo() -> Vec<FileTags> {
        vec![
            file(
                "src/routing/mod.rs",
                &["Router"],
                &["MethodRouter", "Handler"],
                "router route",
            ),
            file(
                "src/routing/method_routing.rs",
                &["MethodRouter"],
                &["Handler"],
                "method",
            ),
            file("src/handler/mod.rs", &["Handler"], &[], "handler call"),
            file("src/json.rs", &["Json"], &["Handler"], "json serde body"),
            file("Cargo.lock", &[], &[], "router json handler"),
            file("README.md", &[], &[], "a web framework"),
        ]
    }

    fn order(task: &str) -> Vec<String> {
        let files = repo();
        rank(&files, task)
            .into_iter()
            .map(|r| files[r.index].path.clone())
            .collect()
    }

    #[test]
    fn check_rankings() {
        // (task, the files expected first, in order)
        let cases: &[(&str, &[&str])] = &[
            ("Fix routing of nested routers", &["src/routing/mod.rs"]),
            (
                "Add `MethodRouter::on` for any method",
                &["src/routing/method_routing.rs"],
            ),
            ("json body rejection", &["src/json.rs"]),
            // the graph lifts the handler trait the router uses above unrelated files
            (
                "router",
                &[
                    "src/routing/mod.rs",
                    "src/routing/method_routing.rs",
                    "src/handler/mod.rs",
                ],
            ),
            // look-alike: the lockfile mentions every word but is not source
            ("router json handler", &["src/handler/mod.rs"]),
        ];
        for (task, expected) in cases {
            let got = order(task);
            assert_eq!(&got[..expected.len()], *expected, "{task}: {got:?}");
        }
    }

    #[test]
    fn nothing_matched_gives_the_central_files() {
        let got = order("zzz qqq");
        assert_eq!(got[0], "src/handler/mod.rs", "{got:?}");
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn priors() {
        for (path, p) in [
            ("Cargo.lock", 0.2),
            ("go.sum", 0.2),
            ("web/node_modules/x/index.js", 0.2),
            ("src/build.rs", 1.0),
            ("src/lock.rs", 1.0),
            ("src/vendors.rs", 1.0),
        ] {
            assert!((prior(path) - p).abs() < f64::EPSILON, "{path}");
        }
    }
}
