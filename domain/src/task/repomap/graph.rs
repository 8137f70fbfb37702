//! The definition/reference graph and its personalised PageRank, after aider's repository
//! map: an edge goes from a file that uses an identifier to each file that defines it,
//! weighted by how often it is used (square root, so one chatty file does not dominate),
//! split among the files defining it, ten times heavier for an identifier the task names
//! and a tenth for private (`_x`) or ubiquitous (defined in many files) names. The walk
//! restarts on the files the task's words match, so rank flows from them to the code they
//! depend on.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::FileTags;

const DAMPING: f64 = 0.85;
const ITERATIONS: usize = 30;
/// An identifier defined in more files than this says little about any of them.
const UBIQUITOUS: usize = 5;

/// The weighted edges `from → [(to, weight)]`.
pub fn edges(files: &[FileTags], named: &BTreeSet<String>) -> Vec<Vec<(usize, f64)>> {
    // Looked up once per identifier use (tens of thousands): hashed, not ordered.
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        for d in &f.defs {
            let list = definers.entry(d.name.as_str()).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    files
        .iter()
        .enumerate()
        .map(|(from, f)| {
            let mut out: BTreeMap<usize, f64> = BTreeMap::new();
            for (ident, count) in &f.refs {
                let Some(to) = definers.get(ident.as_str()) else {
                    continue;
                };
                let mut mul = 1.0;
                if named.contains(ident) {
                    mul *= 10.0;
                }
                if ident.starts_with('_') {
                    mul *= 0.1;
                }
                if to.len() > UBIQUITOUS {
                    mul *= 0.1;
                }
                #[expect(clippy::cast_precision_loss, reason = "small counts")]
                let w = mul * f64::from(*count).sqrt() / to.len() as f64;
                for &t in to.iter().filter(|t| **t != from) {
                    *out.entry(t).or_default() += w;
                }
            }
            out.into_iter().collect()
        })
        .collect()
}

/// The PageRank of each file, restarting on `personal` (any non-negative weights; all
/// zero means uniform).
#[expect(clippy::cast_precision_loss, reason = "file counts are small")]
pub fn pagerank(edges: &[Vec<(usize, f64)>], personal: &[f64]) -> Vec<f64> {
    let n = edges.len();
    if n == 0 {
        return Vec::new();
    }
    let total: f64 = personal.iter().sum();
    let p: Vec<f64> = if total > 0.0 {
        personal.iter().map(|w| w / total).collect()
    } else {
        vec![1.0 / n as f64; n]
    };
    let out_weight: Vec<f64> = edges
        .iter()
        .map(|e| e.iter().map(|(_, w)| w).sum())
        .collect();
    let mut rank = p.clone();
    for _ in 0..ITERATIONS {
        let mut next: Vec<f64> = p.iter().map(|x| (1.0 - DAMPING) * x).collect();
        let mut dangling = 0.0;
        for (from, es) in edges.iter().enumerate() {
            if out_weight[from] <= 0.0 {
                dangling += rank[from];
                continue;
            }
            for (to, w) in es {
                next[*to] += DAMPING * rank[from] * w / out_weight[from];
            }
        }
        for (x, pi) in next.iter_mut().zip(&p) {
            *x += DAMPING * dangling * pi;
        }
        rank = next;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::repomap::{DefKind, Definition};

    fn file(path: &str, defs: &[&str], refs: &[(&str, u32)]) -> FileTags {
        FileTags {
            path: path.to_owned(),
            defs: defs
                .iter()
                .map(|n| Definition {
                    name: (*n).to_owned(),
                    kind: DefKind::Type,
                    line: 1,
                    signature: String::new(),
                })
                .collect(),
            refs: refs.iter().map(|(r, n)| ((*r).to_owned(), *n)).collect(),
            terms: Vec::new(),
        }
    }

    #[test]
    fn rank_flows_from_the_matched_file_to_what_it_uses() {
        let files = vec![
            file("handler.rs", &["handle"], &[("Body", 4)]),
            file("body.rs", &["Body"], &[]),
            file("other.rs", &["Other"], &[]),
        ];
        let e = edges(&files, &BTreeSet::new());
        assert_eq!(e[0], vec![(1, 2.0)]);
        let r = pagerank(&e, &[1.0, 0.0, 0.0]);
        assert!(r[1] > r[2], "{r:?}");
        assert!(r[2].abs() < 1e-12, "{r:?}");
        let total: f64 = r.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn named_private_and_ubiquitous_identifiers_are_weighted() {
        let mut files = vec![file(
            "a.rs",
            &[],
            &[("Named", 1), ("_private", 1), ("new", 1)],
        )];
        files.push(file("n.rs", &["Named", "_private"], &[]));
        for i in 0..6 {
            files.push(file(&format!("m{i}.rs"), &["new"], &[]));
        }
        let named: BTreeSet<String> = ["Named".to_owned()].into();
        let e = edges(&files, &named);
        let to_n = e[0].iter().find(|(t, _)| *t == 1).unwrap().1;
        assert!((to_n - 10.1).abs() < 1e-9, "{to_n}");
        let to_m = e[0].iter().find(|(t, _)| *t == 2).unwrap().1;
        assert!((to_m - 0.1 / 6.0).abs() < 1e-9, "{to_m}");
    }

    #[test]
    fn no_files_no_rank_and_no_personalisation_is_uniform() {
        assert!(pagerank(&[], &[]).is_empty());
        let r = pagerank(&[vec![], vec![]], &[0.0, 0.0]);
        assert!(
            (r[0] - 0.5).abs() < 1e-9 && (r[1] - 0.5).abs() < 1e-9,
            "{r:?}"
        );
    }
}
