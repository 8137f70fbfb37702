//! The repository map's cost on a real repository (tokio-rs/axum, 491 files, from the
//! `xtask bench --context` data), optimised as shipped: cold (empty cache: every file read,
//! digested and parsed) and warm (the cache filled: the files' size and mtime checked
//! against their stamps, none read or parsed),
//! each including the ranking and rendering of the map, compared with the targets (cold
//! ≤ 1 s, warm ≤ 100 ms) as printed ratios, not timed tests; and `git ls-files`-like
//! walking alone as the floor measured in the same run. Run: `cargo bench -p
//! forge-adapter-repomap --bench map` (or `cargo xtask bench --context`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark binary"
)]

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;
use std::time::Instant;

use forge_adapter_repomap::TreeSitterMapper;
use forge_domain::task::repomap;

const ROUNDS: usize = 7;

#[derive(serde::Deserialize)]
struct Data {
    blobs: HashMap<String, String>,
    tree: std::collections::BTreeMap<String, String>,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    subject: String,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/benchdata/context/axum.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&data).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let data: Data = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    for (path, blob) in &data.tree {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &data.blobs[blob]).unwrap();
        // A checkout made an hour ago, as a user's is (a file written just now is always
        // read again: its mtime is too recent to trust).
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
    }
    let task = &data.cases[0].subject;
    let map_once = |cache: &Path| {
        let t = Instant::now();
        let tags = TreeSitterMapper::new(Some(cache.to_path_buf()))
            .tags_blocking(&repo, &repo, 20_000)
            .unwrap();
        let tagged = t.elapsed().as_secs_f64() * 1000.0;
        let map = repomap::build(&tags.files, task, repomap::DEFAULT_CONTEXT_CHARS);
        std::hint::black_box(map);
        let total = t.elapsed().as_secs_f64() * 1000.0;
        (
            total,
            tags.files.len(),
            tags.parsed,
            tags.cached,
            total - tagged,
        )
    };
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let mut ranking = Vec::new();
    let mut files = 0;
    let mut cached = 0;
    for round in 0..ROUNDS {
        let cache = dir.path().join(format!("cache-{round}"));
        let (ms, n, parsed, _, _) = map_once(&cache);
        assert!(parsed > 0, "a cold map parses");
        cold.push(ms);
        let (ms, _, _, c, rank_ms) = map_once(&cache);
        warm.push(ms);
        ranking.push(rank_ms);
        files = n;
        cached = c;
    }
    let walk: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            let n = ignore::WalkBuilder::new(&repo)
                .hidden(false)
                .build()
                .count();
            std::hint::black_box(n);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let (cold, warm, walk, ranking) = (median(cold), median(warm), median(walk), median(ranking));
    println!("repository map, tokio-rs/axum ({files} files), median of {ROUNDS}:");
    println!(
        "  cold  {cold:>7.1} ms  (target ≤ 1000 ms: ×{:.2} of it)",
        cold / 1000.0
    );
    println!(
        "  warm  {warm:>7.1} ms  (target ≤ 100 ms: ×{:.2} of it; {cached} files from the cache)",
        warm / 100.0
    );
    println!("  rank  {ranking:>7.1} ms  (of warm: ranking and rendering the map, no I/O)");
    println!(
        "  walk  {walk:>7.1} ms  (the directory walk alone; warm is ×{:.1} of it)",
        warm / walk.max(0.001)
    );
}
