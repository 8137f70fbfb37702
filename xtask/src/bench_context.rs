//! `cargo xtask bench --context` (issue 33): does the repository map find the files a real
//! change touched, and how fast is it?
//!
//! The cases are real commits of public repositories in three languages, stored in
//! `xtask/benchdata/context/<name>.json.gz` (built by `make.py` beside them, which says
//! how): a commit's subject is the task, the files it changed that exist in its parent are
//! the truth, the repository at its parent is what is ranked. Per repository it prints
//! hit@3 (a changed file among the first three) and MRR (of the first changed file) of the
//! map's ranking against plain BM25 over the files' contents, measured in the same run on
//! the same parsed files, and how often a changed file is in the 3 000-character map.
//! Then the time to map tokio-rs/axum cold (no cache) and warm (cache filled), from the
//! adapter's bench in a release build.

use anyhow::{Context, bail};
use forge_adapter_repomap::tags_of;
use forge_domain::task::repomap::{self, FileTags, lexical};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use crate::e2e::say;

/// One stored repository and its cases.
#[derive(Debug, Deserialize)]
pub(crate) struct Dataset {
    pub name: String,
    pub source: String,
    pub base: String,
    /// Content by git blob id.
    pub blobs: HashMap<String, String>,
    /// The repository at `base`: path → blob id.
    pub tree: BTreeMap<String, String>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Case {
    /// Named in messages about the data.
    pub commit: String,
    pub subject: String,
    pub truth: Vec<String>,
    /// The case's parent tree against `tree`: path → blob id, `None` when gone.
    pub overlay: BTreeMap<String, Option<String>>,
}

/// hit@3 and MRR of one ranker over a repository's cases.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Score {
    pub hits3: usize,
    pub rr_sum: f64,
}

impl Score {
    fn add(&mut self, ranking: &[&str], truth: &[String]) {
        if let Some(pos) = ranking.iter().position(|p| truth.iter().any(|t| t == p)) {
            if pos < 3 {
                self.hits3 += 1;
            }
            #[expect(clippy::cast_precision_loss, reason = "a rank")]
            let rr = 1.0 / (pos + 1) as f64;
            self.rr_sum += rr;
        }
    }
}

/// The scores of a repository.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Outcome {
    pub cases: usize,
    pub map: Score,
    pub bm25: Score,
    /// Cases with a changed file shown in the rendered map.
    pub in_map: usize,
}

pub(crate) fn data_dir(root: &Path) -> PathBuf {
    root.join("xtask/benchdata/context")
}

pub(crate) fn load(path: &Path) -> anyhow::Result<Dataset> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Ranks every case of `data` with the map and with BM25.
pub(crate) fn evaluate(data: &Dataset) -> anyhow::Result<Outcome> {
    // Tags by (path, blob): a file unchanged between cases is parsed once.
    let mut memo: HashMap<(String, String), FileTags> = HashMap::new();
    let mut out = Outcome::default();
    for case in &data.cases {
        let mut tree = data.tree.clone();
        for (path, blob) in &case.overlay {
            match blob {
                Some(b) => tree.insert(path.clone(), b.clone()),
                None => tree.remove(path),
            };
        }
        let mut files = Vec::with_capacity(tree.len());
        for (path, blob) in tree {
            let key = (path, blob);
            if !memo.contains_key(&key) {
                let text = data.blobs.get(&key.1).with_context(|| {
                    format!("{} {}: blob {} missing", data.name, case.commit, key.1)
                })?;
                memo.insert(key.clone(), tags_of(&key.0, text));
            }
            if let Some(t) = memo.get(&key) {
                files.push(t.clone());
            }
        }
        let ranked = repomap::rank(&files, &case.subject);
        let map_order: Vec<&str> = ranked
            .iter()
            .map(|r| files[r.index].path.as_str())
            .collect();
        let scores = lexical::bm25_content(&files, &case.subject);
        let mut bm25: Vec<(f64, &str)> = scores
            .iter()
            .zip(&files)
            .filter(|(s, _)| **s > 0.0)
            .map(|(s, f)| (*s, f.path.as_str()))
            .collect();
        bm25.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let bm25_order: Vec<&str> = bm25.iter().map(|(_, p)| *p).collect();
        out.cases += 1;
        out.map.add(&map_order, &case.truth);
        out.bm25.add(&bm25_order, &case.truth);
        let shown = repomap::render(
            &files,
            &ranked,
            &case.subject,
            repomap::DEFAULT_CONTEXT_CHARS,
        );
        if shown.files.iter().any(|p| case.truth.contains(p)) {
            out.in_map += 1;
        }
    }
    Ok(out)
}

pub fn run(root: &Path) -> anyhow::Result<()> {
    let dir = data_dir(root);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no benchmark data in {}", dir.display());
    }
    say("bench --context: the repository map's ranking vs BM25 over file contents");
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "cases: real commits (subject = task, changed files present in the parent = truth, \
         repository at the parent), stored in xtask/benchdata/context (see make.py)"
    );
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>6} | {:>9} {:>9} | {:>9} {:>9} | {:>8}",
        "repo", "files", "cases", "map hit@3", "map MRR", "bm25 hit@3", "bm25 MRR", "in map"
    );
    let mut total = Outcome::default();
    for path in &paths {
        let data = load(path)?;
        let o = evaluate(&data)?;
        print_row(&mut out, &data.name, data.tree.len(), &o);
        total.cases += o.cases;
        total.in_map += o.in_map;
        total.map.hits3 += o.map.hits3;
        total.map.rr_sum += o.map.rr_sum;
        total.bm25.hits3 += o.bm25.hits3;
        total.bm25.rr_sum += o.bm25.rr_sum;
        let _ = writeln!(
            out,
            "         {} at {} ({} commits after it)",
            data.source,
            &data.base[..12],
            data.cases.len()
        );
    }
    print_row(&mut out, "all", 0, &total);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::INFINITY };
    #[expect(clippy::cast_precision_loss, reason = "case counts")]
    let (mh, bh) = (total.map.hits3 as f64, total.bm25.hits3 as f64);
    let _ = writeln!(
        out,
        "map / bm25: hit@3 ×{:.2}, MRR ×{:.2}",
        ratio(mh, bh),
        ratio(total.map.rr_sum, total.bm25.rr_sum)
    );
    // The time, optimised as shipped: the adapter's bench (a release build) maps
    // tokio-rs/axum cold and warm.
    drop(out);
    say("cargo bench -p forge-adapter-repomap --bench map");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["bench", "-p", "forge-adapter-repomap", "--bench", "map"])
        .current_dir(root)
        .status()
        .context("running the repository map's bench")?;
    if !status.success() {
        bail!("the repository map's bench failed ({status})");
    }
    Ok(())
}

fn print_row(out: &mut impl std::io::Write, name: &str, files: usize, o: &Outcome) {
    #[expect(clippy::cast_precision_loss, reason = "case counts")]
    let n = o.cases.max(1) as f64;
    #[expect(clippy::cast_precision_loss, reason = "case counts")]
    let pct = |k: usize| 100.0 * k as f64 / n;
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>6} | {:>8.0}% {:>9.3} | {:>9.0}% {:>9.3} | {:>7.0}%",
        name,
        if files == 0 {
            String::new()
        } else {
            files.to_string()
        },
        o.cases,
        pct(o.map.hits3),
        o.map.rr_sum / n,
        pct(o.bm25.hits3),
        o.bm25.rr_sum / n,
        pct(o.in_map)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Dataset {
        let blobs = [
            (
                "b1",
                "pub struct Router;\nimpl Router { pub fn nest(&self) {} }\n",
            ),
            ("b2", "pub fn parse_json(body: &str) {}\n"),
            ("b3", "# Docs\nrouter and json\n"),
            ("b4", "pub fn parse_json(body: &str, strict: bool) {}\n"),
        ];
        Dataset {
            name: "tiny".into(),
            source: "here".into(),
            base: "0000000000000000".into(),
            blobs: blobs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            tree: [
                ("src/router.rs", "b1"),
                ("src/json.rs", "b2"),
                ("README.md", "b3"),
            ]
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
            cases: vec![
                Case {
                    commit: "c1".into(),
                    subject: "Fix nested routers".into(),
                    truth: vec!["src/router.rs".into()],
                    overlay: BTreeMap::new(),
                },
                Case {
                    commit: "c2".into(),
                    subject: "strict json parsing".into(),
                    truth: vec!["src/json.rs".into()],
                    overlay: [
                        ("src/json.rs".to_owned(), Some("b4".to_owned())),
                        ("README.md".to_owned(), None),
                    ]
                    .into_iter()
                    .collect(),
                },
            ],
        }
    }

    #[test]
    fn the_harness_scores_a_tiny_case() {
        let o = evaluate(&tiny()).unwrap();
        assert_eq!(o.cases, 2);
        assert_eq!(o.map.hits3, 2);
        assert!((o.map.rr_sum - 2.0).abs() < 1e-9, "{o:?}");
        assert_eq!(o.in_map, 2);
    }

    #[test]
    fn the_stored_data_loads() {
        let dir = data_dir(&crate::workspace_root());
        for name in ["axum", "flask", "cobra"] {
            let d = load(&dir.join(format!("{name}.json.gz"))).unwrap();
            assert!(d.cases.len() >= 20, "{name}: {}", d.cases.len());
            assert!(d.tree.values().all(|b| d.blobs.contains_key(b)), "{name}");
            for c in &d.cases {
                assert!(!c.truth.is_empty(), "{name} {}", c.commit);
                assert!(
                    c.overlay
                        .values()
                        .flatten()
                        .all(|b| d.blobs.contains_key(b))
                );
            }
        }
    }
}
