//! Warm validation in a new work tree (issue 28): before the baseline, the task claims a
//! slot of each build cache its project uses (`BuildCache` port), copies in the ignored
//! lockfiles the user's build used, and gives its source files back the mtimes the cache's
//! last build judged. The validation steps then run with the cache (`CARGO_TARGET_DIR`,
//! the virtual environment on `PATH`, `node_modules` linked in), and each step's report
//! names its cache and whether it was warm. The claims are held until the task ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use forge_domain::ForgeError;
use forge_domain::task::buildcache::{
    CacheKind, CacheState, StepCache, cache_for_command, caches_for, entry_name, repo_folder,
};
use forge_domain::task::{StepName, ValidationStep};
use forge_ports::{BuildCache, CacheClaim, ClaimRequest, EnvSnapshot, Invocation, ProcessRunner};

use super::detect::PlannedStep;

/// Forge's folder in the user's checkout, listed in `.git/info/exclude`.
pub const EXCLUDE_LINE: &str = "/.forgecode/";

/// The caches one task holds, and what its validation steps are told.
pub struct Warm {
    cache: Arc<dyn BuildCache>,
    worktree: PathBuf,
    claims: Vec<CacheClaim>,
    /// Set for every validation step.
    pub env: BTreeMap<String, String>,
    kinds: Vec<CacheKind>,
    /// Per kind, what the next step using it reports (after the first pass: a hit).
    notes: Mutex<BTreeMap<CacheKind, StepCache>>,
}

impl Warm {
    /// The cache directories the task's steps write (a sandboxed step may write nowhere else
    /// outside its work tree).
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.claims.iter().map(|c| c.dir.clone()).collect()
    }
}

impl std::fmt::Debug for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warm")
            .field("claims", &self.claims)
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

/// What [`prepare`] needs besides the cache.
pub struct WarmInputs<'a> {
    pub runner: &'a dyn ProcessRunner,
    /// The user's checkout (the repository forge was pointed at).
    pub checkout: &'a Path,
    pub worktree: &'a Path,
    /// Top-level names in the work tree.
    pub top_level: Vec<String>,
    /// The environment validation inherits (for `PATH`).
    pub env: &'a EnvSnapshot,
}

/// Claims and prepares the caches of the project in `inputs.worktree`.
///
/// # Errors
/// [`ForgeError::Io`] when a cache cannot be claimed or seeded, a lockfile not copied, or
/// `rustc -vV` (the cargo cache's key) fails.
pub async fn prepare(
    cache: Arc<dyn BuildCache>,
    inputs: &WarmInputs<'_>,
) -> Result<Warm, ForgeError> {
    let kinds = caches_for(inputs.top_level.iter().map(String::as_str));
    let checkout_name = inputs
        .checkout
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = repo_folder(
        &checkout_name,
        &cache.digest_text(&inputs.checkout.display().to_string()),
    );
    let mut claims = Vec::new();
    let mut env = BTreeMap::new();
    let mut notes = BTreeMap::new();
    for &kind in &kinds {
        // The user's build used these; a work tree lacks them when they are ignored.
        cache
            .copy_missing(inputs.checkout, inputs.worktree, kind.lockfiles())
            .await?;
        let (digest, seed) = match kind {
            CacheKind::Cargo => (cache.digest_text(&toolchain(inputs).await?), true),
            CacheKind::Node | CacheKind::Python => {
                let here = cache
                    .digest_files(inputs.worktree, kind.key_files())
                    .await?
                    .unwrap_or_default();
                let there = cache
                    .digest_files(inputs.checkout, kind.key_files())
                    .await?;
                let seed = there.as_deref() == Some(here.as_str());
                (here, seed)
            }
        };
        let claim = cache
            .claim(&ClaimRequest {
                kind,
                repo_folder: folder.clone(),
                entry: entry_name(kind, &digest),
                checkout: inputs.checkout.to_owned(),
                seed,
            })
            .await?;
        let warm_files = if kind == CacheKind::Cargo {
            cache.restore_mtimes(&claim, inputs.worktree).await?
        } else {
            0
        };
        match kind {
            CacheKind::Cargo => {
                env.insert(
                    "CARGO_TARGET_DIR".to_owned(),
                    claim.dir.display().to_string(),
                );
            }
            CacheKind::Python => {
                let path = inputs.env.get("PATH").cloned().unwrap_or_default();
                let bin = claim.dir.join("bin");
                env.insert("VIRTUAL_ENV".to_owned(), claim.dir.display().to_string());
                env.insert("PATH".to_owned(), format!("{}:{path}", bin.display()));
            }
            CacheKind::Node => {
                if claim.ready && !inputs.worktree.join("node_modules").exists() {
                    cache
                        .link_tree(kind, &claim.dir, &inputs.worktree.join("node_modules"))
                        .await?;
                }
            }
        }
        notes.insert(
            kind,
            StepCache {
                kind,
                entry: claim.label.clone(),
                state: claim.state,
                warm_files,
            },
        );
        claims.push(claim);
    }
    Ok(Warm {
        cache,
        worktree: inputs.worktree.to_owned(),
        claims,
        env,
        kinds,
        notes: Mutex::new(notes),
    })
}

/// `rustc -vV` in the work tree (its `rust-toolchain.toml` chooses): the cargo cache's key.
async fn toolchain(inputs: &WarmInputs<'_>) -> Result<String, ForgeError> {
    let mut invocation = Invocation::new("rustc", vec!["-vV".to_owned()], inputs.worktree);
    invocation.install_hint = Some("cargo projects need rustc (rustup.rs)".to_owned());
    let out = inputs
        .runner
        .output(invocation, Duration::from_secs(60))
        .await?;
    if out.code != Some(0) {
        return Err(ForgeError::io(
            "rustc -vV (the build cache's toolchain key)",
            out.stderr.trim(),
        ));
    }
    Ok(out.stdout)
}

impl Warm {
    fn claim(&self, kind: CacheKind) -> Option<&CacheClaim> {
        self.claims.iter().find(|c| c.kind == kind)
    }

    /// What the check running `command` reports about its cache; later checks of the same
    /// cache in this task find it warm.
    pub fn note_for(&self, command: &str) -> Option<StepCache> {
        let kind = cache_for_command(command, &self.kinds)?;
        let mut notes = self.notes.lock().ok()?;
        let note = notes.get_mut(&kind)?;
        let now = note.clone();
        note.state = CacheState::Hit;
        note.warm_files = 0;
        Some(now)
    }

    /// The note of an install step: the cache's state as claimed, left for the first
    /// check to report too (an install's report is kept only when it fails).
    pub fn peek_note(&self, command: &str) -> Option<StepCache> {
        let kind = cache_for_command(command, &self.kinds)?;
        self.notes.lock().ok()?.get(&kind).cloned()
    }

    /// Called before each validation pass: what the cargo cache's build will judge.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the work tree cannot be read or the record written.
    pub async fn before_pass(&self) -> Result<(), ForgeError> {
        if let Some(claim) = self.claim(CacheKind::Cargo) {
            self.cache.record_sources(claim, &self.worktree).await?;
        }
        Ok(())
    }

    /// The install steps to run: the plan's own, except that `node_modules` from a ready
    /// node cache replaces `npm ci` (reported by [`Warm::skipped_install`]); and a new
    /// Python cache is created first.
    pub fn install_steps(&self, plan_install: Option<&PlannedStep>) -> Vec<PlannedStep> {
        let mut steps = Vec::new();
        if let Some(claim) = self.claim(CacheKind::Python).filter(|c| !c.ready) {
            let venv = shell_word(&claim.dir.display().to_string());
            let mut command = format!("python3 -m venv --system-site-packages {venv}");
            if self.worktree.join("requirements.txt").is_file() {
                command.push_str(&format!(
                    " && {venv}/bin/python -m pip install -q -r requirements.txt"
                ));
            }
            steps.push(PlannedStep {
                name: StepName::Install,
                command,
            });
        }
        if let Some(step) = plan_install {
            if !self.node_ready(&step.command) {
                steps.push(step.clone());
            }
        }
        steps
    }

    fn node_ready(&self, command: &str) -> bool {
        cache_for_command(command, &self.kinds) == Some(CacheKind::Node)
            && self.claim(CacheKind::Node).is_some_and(|c| c.ready)
    }

    /// The plan's install step when a ready node cache stood in for it: recorded, with
    /// why it did not run.
    pub fn skipped_install(&self, plan_install: Option<&PlannedStep>) -> Option<ValidationStep> {
        let step = plan_install.filter(|s| self.node_ready(&s.command))?;
        let note = self.peek_note(&step.command)?;
        Some(ValidationStep {
            name: step.name,
            command: step.command.clone(),
            exit_code: Some(0),
            duration_ms: 0,
            output_tail: format!(
                "not run: node_modules linked from the build cache {} ({}), keyed by the lockfile",
                note.entry,
                note.state.as_str()
            ),
            timed_out: false,
            cache: Some(note),
            failed_tests: None,
            sandbox_denied: Vec::new(),
        })
    }

    /// After the install steps passed: a cache they filled is complete now (node: the
    /// work tree's `node_modules` is linked into it).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the cache cannot be filled or marked.
    pub async fn after_install(&self) -> Result<(), ForgeError> {
        for claim in self.claims.iter().filter(|c| !c.ready) {
            match claim.kind {
                CacheKind::Node => {
                    let modules = self.worktree.join("node_modules");
                    if !modules.is_dir() {
                        continue;
                    }
                    self.cache
                        .link_tree(CacheKind::Node, &modules, &claim.dir)
                        .await?;
                }
                CacheKind::Python | CacheKind::Cargo => {}
            }
            self.cache.mark_ready(claim).await?;
        }
        Ok(())
    }
}

fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The text of an exclude file with forge's line added (`None`: already there).
pub fn with_exclude_line(existing: &str) -> Option<String> {
    if existing.lines().any(|l| {
        matches!(
            l.trim(),
            EXCLUDE_LINE | "/.forgecode" | ".forgecode/" | ".forgecode"
        )
    }) {
        return None;
    }
    let mut text = existing.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# forge-code-agent's own folder (task work trees, reports)\n");
    text.push_str(EXCLUDE_LINE);
    text.push('\n');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exclude_line_is_added_once() {
        for (existing, expected) in [
            (
                "",
                Some("# forge-code-agent's own folder (task work trees, reports)\n/.forgecode/\n"),
            ),
            (
                "*.log",
                Some(
                    "*.log\n# forge-code-agent's own folder (task work trees, reports)\n/.forgecode/\n",
                ),
            ),
            ("/.forgecode/\n", None),
            (".forgecode\n", None),
            // Look-alike: a deeper path is not forge's folder.
            (
                "sub/.forgecode/\n",
                Some(
                    "sub/.forgecode/\n# forge-code-agent's own folder (task work trees, reports)\n/.forgecode/\n",
                ),
            ),
        ] {
            assert_eq!(
                with_exclude_line(existing).as_deref(),
                expected,
                "{existing:?}"
            );
        }
    }

    #[test]
    fn shell_words_are_quoted() {
        assert_eq!(shell_word("/a b/it's"), "'/a b/it'\\''s'");
    }
}
