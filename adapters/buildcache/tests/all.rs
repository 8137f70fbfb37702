//! One integration-test binary for forge-adapter-buildcache: FsBuildCache on a real file
//! system: seeding without changing the user's build, slots for tasks at the same time,
//! warm mtimes only for identical files, trimming.

// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the fixture helpers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a panic is a failing test"
)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use forge_adapter_buildcache::FsBuildCache;
use forge_domain::task::buildcache::{CacheKind, CacheState};
use forge_ports::{BuildCache, ClaimRequest};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn set_old(path: &Path, secs_ago: u64) {
    let f = std::fs::File::open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

/// A checkout with a built `target/`.
fn checkout(dir: &Path) {
    write(&dir.join("Cargo.toml"), "[package]\nname = \"x\"\n");
    write(&dir.join("src/lib.rs"), "pub fn f() {}\n");
    write(&dir.join(".gitignore"), "/target\n/Cargo.lock\n");
    write(&dir.join("Cargo.lock"), "version = 4\n");
    write(&dir.join("target/debug/deps/libdep-1.rlib"), "RLIB");
    write(&dir.join("target/debug/.fingerprint/dep-1/lib-dep"), "FP");
    write(
        &dir.join("target/debug/incremental/x-1/s/dep-graph.bin"),
        "INC",
    );
    for f in ["Cargo.toml", "src/lib.rs", "Cargo.lock"] {
        set_old(&dir.join(f), 3600);
    }
}

fn request(checkout: &Path) -> ClaimRequest {
    ClaimRequest {
        kind: CacheKind::Cargo,
        repo_folder: "x-123".into(),
        entry: "cargo-abc".into(),
        checkout: checkout.to_owned(),
        seed: true,
    }
}

#[tokio::test]
async fn a_seeded_cache_shares_artifacts_and_copies_what_cargo_rewrites() {
    let tmp = tempfile::tempdir().unwrap();
    let co = tmp.path().join("co");
    checkout(&co);
    let cache = FsBuildCache::new(tmp.path().join("cache"));
    let claim = cache.claim(&request(&co)).await.unwrap();
    assert_eq!(claim.state, CacheState::Seeded);
    assert!(claim.ready);
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    let rlib = "debug/deps/libdep-1.rlib";
    let fp = "debug/.fingerprint/dep-1/lib-dep";
    assert_eq!(
        ino(&co.join("target").join(rlib)),
        ino(&claim.dir.join(rlib))
    );
    assert_ne!(ino(&co.join("target").join(fp)), ino(&claim.dir.join(fp)));
    assert!(!claim.dir.join("debug/incremental").exists());
    // cargo rewriting its fingerprint in the cache leaves the user's alone.
    std::fs::write(claim.dir.join(fp), "CHANGED").unwrap();
    assert_eq!(
        std::fs::read_to_string(co.join("target").join(fp)).unwrap(),
        "FP"
    );

    // A second task at the same time gets its own slot; after the first ends, a hit.
    let second = cache.claim(&request(&co)).await.unwrap();
    assert!(second.label.ends_with("slot 1"), "{}", second.label);
    drop(claim);
    let again = cache.claim(&request(&co)).await.unwrap();
    assert!(again.label.ends_with("slot 0"));
    assert_eq!(again.state, CacheState::Hit);
}

#[tokio::test]
async fn identical_files_take_back_the_time_the_build_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let co = tmp.path().join("co");
    checkout(&co);
    let wt = tmp.path().join("wt");
    write(&wt.join("Cargo.toml"), "[package]\nname = \"x\"\n");
    write(&wt.join("src/lib.rs"), "pub fn f() { changed() }\n");
    write(&wt.join(".gitignore"), "/target\n/Cargo.lock\n");
    set_old(&wt.join(".gitignore"), 10);
    let cache = FsBuildCache::new(tmp.path().join("cache"));
    let copied = cache
        .copy_missing(&co, &wt, CacheKind::Cargo.lockfiles())
        .await
        .unwrap();
    assert_eq!(copied, vec!["Cargo.lock".to_owned()]);
    let claim = cache.claim(&request(&co)).await.unwrap();
    let warm = cache.restore_mtimes(&claim, &wt).await.unwrap();
    // Cargo.toml and .gitignore are identical (Cargo.lock was copied with its time
    // already); lib.rs differs.
    assert_eq!(warm, 2);
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    assert_eq!(mtime(&wt.join("Cargo.toml")), mtime(&co.join("Cargo.toml")));
    assert_eq!(mtime(&wt.join("Cargo.lock")), mtime(&co.join("Cargo.lock")));
    assert_ne!(mtime(&wt.join("src/lib.rs")), mtime(&co.join("src/lib.rs")));
}

#[tokio::test]
async fn node_caches_are_keyed_and_filled_by_the_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("wt");
    write(&dir.join("package-lock.json"), "{\"lockfileVersion\": 3}");
    let cache = FsBuildCache::new(tmp.path().join("cache"));
    let a = cache
        .digest_files(&dir, CacheKind::Node.key_files())
        .await
        .unwrap();
    write(&dir.join("package-lock.json"), "{\"lockfileVersion\": 2}");
    let b = cache
        .digest_files(&dir, CacheKind::Node.key_files())
        .await
        .unwrap();
    assert!(a.is_some() && a != b);
    assert_eq!(
        cache
            .digest_files(&tmp.path().join("none"), &["x"])
            .await
            .unwrap(),
        None
    );
    let req = ClaimRequest {
        kind: CacheKind::Node,
        repo_folder: "x".into(),
        entry: "node-1".into(),
        checkout: tmp.path().join("co"),
        seed: false,
    };
    let claim = cache.claim(&req).await.unwrap();
    assert_eq!((claim.state, claim.ready), (CacheState::Miss, false));
    write(
        &dir.join("node_modules/left-pad/index.js"),
        "module.exports = 1",
    );
    cache
        .link_tree(CacheKind::Node, &dir.join("node_modules"), &claim.dir)
        .await
        .unwrap();
    cache.mark_ready(&claim).await.unwrap();
    drop(claim);
    let hit = cache.claim(&req).await.unwrap();
    assert_eq!((hit.state, hit.ready), (CacheState::Hit, true));
    assert!(hit.dir.join("left-pad/index.js").is_file());
}

#[tokio::test]
async fn usage_and_removal_spare_a_slot_in_use() {
    let tmp = tempfile::tempdir().unwrap();
    let co = tmp.path().join("co");
    checkout(&co);
    let cache = FsBuildCache::new(tmp.path().join("cache"));
    let held = cache.claim(&request(&co)).await.unwrap();
    let free = cache.claim(&request(&co)).await.unwrap();
    drop(free);
    let usage = cache.usage().await.unwrap();
    assert_eq!(usage.len(), 2);
    let (in_use, idle): (Vec<_>, Vec<_>) = usage.iter().partition(|u| u.in_use);
    assert_eq!((in_use.len(), idle.len()), (1, 1));
    assert!(in_use[0].size_bytes > 0);
    assert!(!cache.remove(Path::new(&in_use[0].path)).await.unwrap());
    assert!(cache.remove(Path::new(&idle[0].path)).await.unwrap());
    assert!(!Path::new(&idle[0].path).exists());
    // Look-alike: a path outside the cache is refused, not removed.
    assert!(cache.remove(&co).await.is_err());
    assert!(co.exists());
    drop(held);
}
