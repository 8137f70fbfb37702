//! Lexical relevance: BM25 over three fields of a file, the way BM25F weighs a title
//! above a body: the path's words count [`PATH_WEIGHT`] times, the definitions' names
//! [`DEF_WEIGHT`] times, the content's words once. A task names a module ("the router",
//! "`Cached` extractor") far more often than it quotes a line of its body, so the path and
//! the definitions carry most of the signal; the content catches the rest.
//!
//! [`bm25_content`] is the plain baseline (content words only) the benchmark compares with.

use std::collections::{BTreeSet, HashMap};

use super::FileTags;
use super::terms;

pub const PATH_WEIGHT: f64 = 4.0;
pub const DEF_WEIGHT: f64 = 2.0;
const K1: f64 = 1.2;
const B: f64 = 0.75;

fn content(file: &FileTags, term: &str) -> u32 {
    file.terms
        .binary_search_by(|(t, _)| t.as_str().cmp(term))
        .map_or(0, |i| file.terms[i].1)
}

fn doc_len(file: &FileTags) -> f64 {
    f64::from(file.terms.iter().map(|(_, n)| *n).sum::<u32>())
}

fn idf(n: usize, df: usize) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The three-field BM25 score of each file for the task's `query` terms.
///
/// Only the query's terms are counted in the path and definition fields (a few of them,
/// against thousands of distinct words), and a definition name's terms are cut once per
/// distinct name (`new`, `from`, `call` recur in hundreds of files): this runs on every
/// task, cache or not.
#[expect(clippy::cast_precision_loss, reason = "file counts are small")]
pub fn bm25f(files: &[FileTags], query: &[String]) -> Vec<f64> {
    let index: HashMap<&str, usize> = query
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    // A definition name → (how many terms it has, the query terms among them).
    let mut names: HashMap<&str, (usize, Vec<usize>)> = HashMap::new();
    let mut tfs: Vec<Vec<f64>> = Vec::with_capacity(files.len());
    let mut lens: Vec<f64> = Vec::with_capacity(files.len());
    for f in files {
        let mut tf = vec![0.0; query.len()];
        let path = terms::of_path(&f.path);
        for t in &path {
            if let Some(&i) = index.get(t.as_str()) {
                tf[i] += PATH_WEIGHT;
            }
        }
        let mut def_terms = 0;
        for d in &f.defs {
            let (count, hits) = names.entry(d.name.as_str()).or_insert_with(|| {
                let all = terms::of_identifier(&d.name);
                let hits = all
                    .iter()
                    .filter_map(|t| index.get(t.as_str()).copied())
                    .collect();
                (all.len(), hits)
            });
            def_terms += *count;
            for &i in hits.iter() {
                tf[i] += DEF_WEIGHT;
            }
        }
        for (i, term) in query.iter().enumerate() {
            tf[i] += f64::from(content(f, term));
        }
        lens.push(doc_len(f) + PATH_WEIGHT * path.len() as f64 + DEF_WEIGHT * def_terms as f64);
        tfs.push(tf);
    }
    let avg = (lens.iter().sum::<f64>() / files.len().max(1) as f64).max(1.0);
    let mut scores = vec![0.0; files.len()];
    for qi in 0..query.len() {
        let df = tfs.iter().filter(|tf| tf[qi] > 0.0).count();
        if df == 0 {
            continue;
        }
        let idf = idf(files.len(), df);
        for (i, tf) in tfs.iter().enumerate() {
            let tf = tf[qi];
            if tf > 0.0 {
                scores[i] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lens[i] / avg));
            }
        }
    }
    scores
}

/// Plain BM25 over the files' content words: the baseline.
#[expect(clippy::cast_precision_loss, reason = "file counts are small")]
pub fn bm25_content(files: &[FileTags], task: &str) -> Vec<f64> {
    let query = terms::of_task(task);
    let lens: Vec<f64> = files.iter().map(doc_len).collect();
    let avg = (lens.iter().sum::<f64>() / files.len().max(1) as f64).max(1.0);
    let mut scores = vec![0.0; files.len()];
    for term in &query {
        let tfs: Vec<f64> = files.iter().map(|f| f64::from(content(f, term))).collect();
        let df = tfs.iter().filter(|tf| **tf > 0.0).count();
        if df == 0 {
            continue;
        }
        let idf = idf(files.len(), df);
        for (i, tf) in tfs.iter().enumerate() {
            if *tf > 0.0 {
                scores[i] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lens[i] / avg));
            }
        }
    }
    scores
}

/// The repository's identifiers the task writes verbatim (`with_state`, `Router`), as
/// aider's map treats the identifiers a chat mentions.
pub fn named_identifiers(files: &[FileTags], task: &str) -> BTreeSet<String> {
    let words: BTreeSet<&str> = task
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .collect();
    files
        .iter()
        .flat_map(|f| &f.defs)
        .filter(|d| words.contains(d.name.as_str()))
        .map(|d| d.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::repomap::{DefKind, Definition};

    fn file(path: &str, defs: &[&str], text: &str) -> FileTags {
        FileTags {
            path: path.to_owned(),
            defs: defs
                .iter()
                .map(|n| Definition {
                    name: (*n).to_owned(),
                    kind: DefKind::Function,
                    line: 1,
                    signature: format!("fn {n}()"),
                })
                .collect(),
            refs: Vec::new(),
            terms: terms::count(text),
        }
    }

    #[test]
    fn the_path_and_definitions_outweigh_a_mention_in_the_body() {
        let files = vec![
            file(
                "src/readme_notes.rs",
                &[],
                "the router router router is fast",
            ),
            file("src/router.rs", &["route"], "pub fn route() {}"),
            file("src/json.rs", &["parse"], "fn parse() {}"),
        ];
        let q = terms::of_task("speed up the router");
        let s = bm25f(&files, &q);
        assert!(s[1] > s[0], "{s:?}");
        assert!(s[2].abs() < f64::EPSILON, "{s:?}");
        // the baseline sees only the body
        let base = bm25_content(&files, "speed up the router");
        assert!(base[0] > base[1], "{base:?}");
    }

    #[test]
    fn quoted_identifiers_are_found_whole() {
        let files = vec![
            file("a.rs", &["with_state", "state"], ""),
            file("b.rs", &["with"], ""),
        ];
        let named: Vec<String> = named_identifiers(&files, "add `with_state` to routers")
            .into_iter()
            .collect();
        assert_eq!(named, vec!["with_state".to_owned()]);
    }
}
