//! Repository index cost, measured against `git ls-files` of the same tree in the same run
//! (a printed ratio, not a timed test). Target (issue 13): the index ≤ 3× `git ls-files`.
//!
//! A generated repository of 10 000 files in 200 directories (with a `.gitignore` that
//! hides a further 1 000 files under `build/`) is committed once; then each side is run
//! `ROUNDS` times and the medians compared. Run: `cargo bench -p forge-adapter-fs --bench
//! index` (or `cargo xtask bench`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark binary"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use forge_adapter_fs::FsRepoIndex;
use forge_ports::RepoIndexer;

const FILES: usize = 10_000;
const DIRS: usize = 200;
const ROUNDS: usize = 7;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn generate(root: &Path) {
    git(root, &["init", "-q"]);
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    for i in 0..FILES {
        let dir = root.join(format!("src/m{:03}", i % DIRS));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i:05}.rs")), format!("// file {i}\n")).unwrap();
    }
    let build = root.join("build");
    std::fs::create_dir_all(&build).unwrap();
    for i in 0..1_000 {
        std::fs::write(build.join(format!("o{i}.o")), "x").unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "generated"]);
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    generate(root);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let index = FsRepoIndex::new();
    let mut ours = Vec::new();
    let mut git_side = Vec::new();
    let mut plain = Vec::new();
    let mut entries = 0;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let found = rt.block_on(index.index(root, 1_000_000)).unwrap();
        ours.push(t.elapsed());
        entries = found.len();
        let t = Instant::now();
        let out = Command::new("git")
            .args(["ls-files", "-z"])
            .current_dir(root)
            .output()
            .unwrap();
        git_side.push(t.elapsed());
        assert!(out.status.success());
        let t = Instant::now();
        std::hint::black_box(plain_walk(root));
        plain.push(t.elapsed());
    }
    let (ours, theirs, plain) = (median(ours), median(git_side), median(plain));
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    println!(
        "index: {FILES} files ({entries} entries with directories): forge index {:.1} ms, git ls-files {:.1} ms, ratio {ratio:.2}× (target ≤ 3×) {}",
        ours.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        if ratio <= 3.0 { "ok" } else { "OVER TARGET" }
    );
    println!(
        "index: for scale, a bare readdir + stat walk (no ignore rules, no sorting) {:.1} ms ({:.2}× git ls-files): the floor of any walk that reports sizes",
        plain.as_secs_f64() * 1e3,
        plain.as_secs_f64() / theirs.as_secs_f64()
    );
}

/// readdir + lstat of every entry, single-threaded, skipping `.git` and `build`.
fn plain_walk(root: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name();
            if name == ".git" || name == "build" {
                continue;
            }
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}
