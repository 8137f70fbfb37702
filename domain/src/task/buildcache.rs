//! The build caches' pure rules (issue 28): which caches a project gets, how they are
//! keyed, which files of a user's warm build may be shared by hard link, which source
//! files may take back the modification time a build already judged, and what `task gc`
//! trims under a size limit.
//!
//! Why modification times: cargo decides whether a workspace crate is fresh by comparing
//! its sources' mtimes with the time of its last build. A new work tree's files are all
//! "now", so every crate of the repository would rebuild although its dependencies were
//! reused. A file whose content is byte-identical to the one a build was judged against
//! may carry that file's mtime again: cargo then decides exactly as it did for the
//! original (fresh stays fresh, stale stays stale), so this is never less correct than
//! the user's own build.

use serde::{Deserialize, Serialize};

/// A kind of build cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    /// A cargo target directory (`CARGO_TARGET_DIR`).
    Cargo,
    /// `node_modules`, keyed by the lockfile.
    Node,
    /// A Python virtual environment, keyed by the requirements / lock files.
    Python,
}

impl CacheKind {
    pub const ALL: [CacheKind; 3] = [CacheKind::Cargo, CacheKind::Node, CacheKind::Python];

    pub fn as_str(self) -> &'static str {
        match self {
            CacheKind::Cargo => "cargo",
            CacheKind::Node => "node",
            CacheKind::Python => "python",
        }
    }

    /// The project file that says a project uses this kind of build.
    pub fn marker_files(self) -> &'static [&'static str] {
        match self {
            CacheKind::Cargo => &["Cargo.toml"],
            CacheKind::Node => &["package.json"],
            CacheKind::Python => &[
                "pyproject.toml",
                "requirements.txt",
                "setup.py",
                "setup.cfg",
                "pytest.ini",
                "tox.ini",
            ],
        }
    }

    /// The files whose content keys the cache (the toolchain keys a cargo cache instead:
    /// cargo itself tells dependency versions apart inside one target directory).
    pub fn key_files(self) -> &'static [&'static str] {
        match self {
            CacheKind::Cargo => &[],
            CacheKind::Node => &[
                "package-lock.json",
                "npm-shrinkwrap.json",
                "yarn.lock",
                "pnpm-lock.yaml",
                "package.json",
            ],
            CacheKind::Python => &[
                "requirements.txt",
                "requirements-dev.txt",
                "poetry.lock",
                "uv.lock",
                "Pipfile.lock",
                "pyproject.toml",
            ],
        }
    }

    /// Lockfiles the build needs that a repository may ignore (a library's `Cargo.lock`):
    /// copied from the user's checkout into a work tree that lacks them, so the task
    /// builds the versions the user's build used instead of resolving again.
    pub fn lockfiles(self) -> &'static [&'static str] {
        match self {
            CacheKind::Cargo => &["Cargo.lock"],
            CacheKind::Node => &["package-lock.json", "yarn.lock", "pnpm-lock.yaml"],
            CacheKind::Python => &["poetry.lock", "uv.lock"],
        }
    }

    /// The directory of the user's checkout a new cache is seeded from.
    pub fn seed_dir(self) -> &'static str {
        match self {
            CacheKind::Cargo => "target",
            CacheKind::Node => "node_modules",
            CacheKind::Python => ".venv",
        }
    }
}

impl std::fmt::Display for CacheKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The caches of a project whose top-level file names are `present`, in [`CacheKind::ALL`]
/// order.
pub fn caches_for<'a>(present: impl IntoIterator<Item = &'a str> + Clone) -> Vec<CacheKind> {
    CacheKind::ALL
        .into_iter()
        .filter(|k| {
            present
                .clone()
                .into_iter()
                .any(|f| k.marker_files().contains(&f))
        })
        .collect()
}

/// The cache a validation command uses: by its first word (`cargo` → cargo, `npm` /
/// `npx` / `yarn` / `pnpm` / `node` → node, `python*` / `pytest` / `pip` → python), else
/// the project's only cache when it has exactly one.
pub fn cache_for_command(command: &str, caches: &[CacheKind]) -> Option<CacheKind> {
    let first = command.split_whitespace().next().unwrap_or("");
    let program = first.rsplit('/').next().unwrap_or(first);
    let by_name = match program {
        "cargo" | "rustc" => Some(CacheKind::Cargo),
        "npm" | "npx" | "yarn" | "pnpm" | "node" => Some(CacheKind::Node),
        p if p.starts_with("python") || p == "pytest" || p.starts_with("pip") => {
            Some(CacheKind::Python)
        }
        _ => None,
    };
    match by_name {
        Some(kind) => caches.contains(&kind).then_some(kind),
        None => match caches {
            [only] => Some(*only),
            _ => None,
        },
    }
}

/// A cache entry's name: the kind and the first 16 hex digits of its key digest
/// (toolchain for cargo, lockfiles for node and python).
pub fn entry_name(kind: CacheKind, digest: &str) -> String {
    let short: String = digest
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    if short.is_empty() {
        format!("{kind}-none")
    } else {
        format!("{kind}-{short}")
    }
}

/// A repository's folder in the cache: its directory name (made safe) and a digest of its
/// canonical path, so two checkouts named alike never share.
pub fn repo_folder(repo_dir_name: &str, path_digest: &str) -> String {
    let name: String = repo_dir_name
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let short: String = path_digest.chars().take(12).collect();
    format!("{name}-{short}")
}

/// How a step's cache was found when the task claimed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// The cache existed and earlier tasks built in it.
    Hit,
    /// New, seeded from the user's own build in the checkout.
    Seeded,
    /// New and empty: this task builds it.
    Miss,
}

impl CacheState {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheState::Hit => "hit",
            CacheState::Seeded => "seeded",
            CacheState::Miss => "miss",
        }
    }
}

/// What a validation step's report says about its cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCache {
    pub kind: CacheKind,
    /// The entry's name (`cargo-<toolchain digest>`, `node-<lock digest>` …) and slot.
    pub entry: String,
    pub state: CacheState,
    /// Source files given back the mtime a build already judged (cargo only).
    #[serde(default)]
    pub warm_files: usize,
}

impl StepCache {
    /// `cargo-1a2b… slot 0: hit (57 files warm)`.
    pub fn describe(&self) -> String {
        if self.warm_files > 0 {
            format!(
                "{} {} ({} files warm)",
                self.entry,
                self.state.as_str(),
                self.warm_files
            )
        } else {
            format!("{} {}", self.entry, self.state.as_str())
        }
    }
}

/// How a file of a user's build is brought into a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedAction {
    /// Shared by hard link: compilers replace these files (write elsewhere, rename), never
    /// write into them, so the user's copy cannot change.
    Link,
    /// Copied with its mtime: cargo rewrites these in place (fingerprints, dep-info,
    /// build-script output), which through a hard link would change the user's build.
    Copy,
    /// Left out.
    Skip,
}

/// What to do with the file at `relative` (inside the seed directory of `kind`).
pub fn seed_action(kind: CacheKind, relative: &str) -> SeedAction {
    let parts: Vec<&str> = relative.split('/').collect();
    match kind {
        CacheKind::Cargo => {
            // Incremental state is per workspace crate and large; a rebuilt crate starts it
            // again. The lock is cargo's own.
            if parts.contains(&"incremental") || parts.last() == Some(&".cargo-lock") {
                return SeedAction::Skip;
            }
            let name = parts.last().copied().unwrap_or("");
            let artifact = [".rlib", ".rmeta", ".so", ".a", ".dylib", ".dll", ".wasm"]
                .iter()
                .any(|ext| name.ends_with(ext));
            if artifact && parts.contains(&"deps") {
                SeedAction::Link
            } else {
                SeedAction::Copy
            }
        }
        // Packages are read, not written, during validation: linked like pnpm's store.
        CacheKind::Node => {
            if parts.contains(&".cache") {
                SeedAction::Skip
            } else {
                SeedAction::Link
            }
        }
        // A virtual environment holds absolute paths: never seeded from elsewhere.
        CacheKind::Python => SeedAction::Skip,
    }
}

/// One source file as a build saw it (or as it is now, with `mtime_ns` unused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub path: String,
    pub digest: String,
    pub mtime_ns: i128,
}

/// The files of `now` whose content equals the one a build judged (`seen`), with the
/// mtime they had then. Files that differ, or that the build never saw, keep their own
/// (newer) time, so cargo rebuilds what they feed.
pub fn restorable_mtimes(seen: &[SourceFile], now: &[SourceFile]) -> Vec<(String, i128)> {
    let by_path: std::collections::BTreeMap<&str, &SourceFile> =
        seen.iter().map(|f| (f.path.as_str(), f)).collect();
    now.iter()
        .filter_map(|f| {
            let old = by_path.get(f.path.as_str())?;
            (old.digest == f.digest && old.mtime_ns != f.mtime_ns)
                .then(|| (f.path.clone(), old.mtime_ns))
        })
        .collect()
}

/// One cache entry (a slot of an entry) as `task gc` sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheUsage {
    pub path: String,
    pub size_bytes: u64,
    /// When a task last claimed it (ms since the epoch, from the file system).
    pub last_used_ms: u64,
    /// A running task holds it.
    pub in_use: bool,
}

/// The entries to remove so the rest fits in `limit_bytes`: least recently used first,
/// never one in use. (An in-use entry larger than the limit is kept: the task needs it.)
pub fn trim(entries: &[CacheUsage], limit_bytes: u64) -> Vec<String> {
    let mut total: u64 = entries.iter().map(|e| e.size_bytes).sum();
    let mut candidates: Vec<&CacheUsage> = entries.iter().filter(|e| !e.in_use).collect();
    candidates.sort_by(|a, b| {
        a.last_used_ms
            .cmp(&b.last_used_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
    let mut out = Vec::new();
    for e in candidates {
        if total <= limit_bytes {
            break;
        }
        total = total.saturating_sub(e.size_bytes);
        out.push(e.path.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_of_a_project() {
        for (files, expected) in [
            (vec!["Cargo.toml", "README.md"], vec![CacheKind::Cargo]),
            (
                vec!["package.json", "pyproject.toml"],
                vec![CacheKind::Node, CacheKind::Python],
            ),
            (vec!["requirements.txt"], vec![CacheKind::Python]),
            // Look-alikes: a lockfile alone, a Makefile, a nested manifest's name.
            (vec!["Cargo.lock", "Makefile", "cargo.toml"], vec![]),
            (vec![], vec![]),
        ] {
            assert_eq!(caches_for(files.iter().copied()), expected, "{files:?}");
        }
    }

    #[test]
    fn the_cache_of_a_command() {
        let rust = [CacheKind::Cargo];
        let mixed = [CacheKind::Cargo, CacheKind::Node];
        for (command, caches, expected) in [
            ("cargo test", &rust[..], Some(CacheKind::Cargo)),
            (
                "/usr/bin/cargo build --all-targets",
                &rust,
                Some(CacheKind::Cargo),
            ),
            ("npm run lint", &mixed, Some(CacheKind::Node)),
            (
                "python -m pytest",
                &[CacheKind::Python],
                Some(CacheKind::Python),
            ),
            (
                "python3 -m pytest",
                &[CacheKind::Python],
                Some(CacheKind::Python),
            ),
            ("make test", &rust, Some(CacheKind::Cargo)),
            // Look-alikes: ambiguous, or a program whose cache the project lacks.
            ("make test", &mixed, None),
            ("npm test", &rust, None),
            ("cargo-deny check", &mixed, None),
            ("", &[], None),
        ] {
            assert_eq!(cache_for_command(command, caches), expected, "{command}");
        }
    }

    #[test]
    fn names_are_short_and_safe() {
        assert_eq!(
            entry_name(CacheKind::Cargo, "0123456789abcdef0123"),
            "cargo-0123456789abcdef"
        );
        assert_eq!(entry_name(CacheKind::Node, "../zz"), "node-none");
        assert_eq!(
            repo_folder("my repo/..", "abcdef0123456789"),
            "my_repo___-abcdef012345"
        );
    }

    #[test]
    fn seed_actions() {
        use SeedAction::{Copy, Link, Skip};
        for (kind, path, expected) in [
            (CacheKind::Cargo, "debug/deps/libserde-1a2b.rlib", Link),
            (CacheKind::Cargo, "debug/deps/libserde-1a2b.rmeta", Link),
            (CacheKind::Cargo, "debug/deps/libproc_macro2-9.so", Link),
            (
                CacheKind::Cargo,
                "debug/.fingerprint/serde-1a2b/lib-serde",
                Copy,
            ),
            (CacheKind::Cargo, "debug/deps/serde-1a2b.d", Copy),
            (CacheKind::Cargo, "debug/build/serde-3c/output", Copy),
            (CacheKind::Cargo, "debug/deps/test_version-77", Copy),
            (CacheKind::Cargo, ".rustc_info.json", Copy),
            // Look-alikes: an artifact's name outside deps/ (cargo's uplifted copy,
            // which cargo replaces by unlinking first but may also rewrite) is copied.
            (CacheKind::Cargo, "debug/libsemver.rlib", Copy),
            (
                CacheKind::Cargo,
                "debug/incremental/semver-1/s-x/dep-graph.bin",
                Skip,
            ),
            (CacheKind::Cargo, "debug/.cargo-lock", Skip),
            (CacheKind::Node, "left-pad/index.js", Link),
            (CacheKind::Node, ".cache/babel/x.json", Skip),
            (CacheKind::Python, "bin/python", Skip),
        ] {
            assert_eq!(seed_action(kind, path), expected, "{kind} {path}");
        }
    }

    fn file(path: &str, digest: &str, mtime_ns: i128) -> SourceFile {
        SourceFile {
            path: path.into(),
            digest: digest.into(),
            mtime_ns,
        }
    }

    #[test]
    fn only_identical_files_take_back_their_time() {
        let seen = [
            file("src/lib.rs", "aa", 100),
            file("src/parse.rs", "bb", 200),
            file("Cargo.toml", "cc", 50),
            file("gone.rs", "dd", 10),
        ];
        let now = [
            file("src/lib.rs", "aa", 900),
            // Changed content: keeps its new time, so cargo rebuilds.
            file("src/parse.rs", "b2", 900),
            // Same time already: nothing to do.
            file("Cargo.toml", "cc", 50),
            // New file the build never saw.
            file("src/new.rs", "ee", 900),
        ];
        assert_eq!(
            restorable_mtimes(&seen, &now),
            vec![("src/lib.rs".to_owned(), 100)]
        );
    }

    #[test]
    fn trim_removes_least_recently_used_entries_not_in_use() {
        let e = |path: &str, size, used, in_use| CacheUsage {
            path: path.into(),
            size_bytes: size,
            last_used_ms: used,
            in_use,
        };
        let entries = [
            e("a", 100, 1, false),
            e("b", 100, 3, false),
            e("c", 100, 0, true),
            e("d", 100, 2, false),
        ];
        for (limit, expected) in [
            (400, vec![]),
            (300, vec!["a"]),
            (250, vec!["a", "d"]),
            // The one in use stays even when alone it is over the limit.
            (0, vec!["a", "d", "b"]),
        ] {
            assert_eq!(trim(&entries, limit), expected, "limit {limit}");
        }
    }

    #[test]
    fn step_cache_descriptions() {
        let mut c = StepCache {
            kind: CacheKind::Cargo,
            entry: "cargo-0123 slot 0".into(),
            state: CacheState::Seeded,
            warm_files: 12,
        };
        assert_eq!(c.describe(), "cargo-0123 slot 0 seeded (12 files warm)");
        c.warm_files = 0;
        c.state = CacheState::Hit;
        assert_eq!(c.describe(), "cargo-0123 slot 0 hit");
    }
}
