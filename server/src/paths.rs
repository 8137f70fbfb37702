//! Where a request may point the agent: an absolute directory that, canonicalised, lies
//! inside one of the server's roots. Checked before anything touches the path, so a bad
//! one is a 400 with the reason and never a run.

use std::path::{Component, Path, PathBuf};

/// Why a requested path was refused (the 400's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefused {
    #[error("the path is empty")]
    Empty,
    #[error("the path contains a NUL byte")]
    Nul,
    #[error("the path must be absolute")]
    Relative,
    #[error("the path contains `..`")]
    ParentDir,
    #[error("the path contains percent-encoded traversal")]
    Encoded,
    #[error("the path does not exist or cannot be resolved")]
    Missing,
    #[error("the path is not a directory")]
    NotDirectory,
    #[error("the path resolves outside the server's roots")]
    OutsideRoots,
    #[error("a file:// URL must name an absolute path")]
    FileUrl,
}

/// The server's roots, canonicalised once at start.
#[derive(Debug, Clone)]
pub struct Roots(Vec<PathBuf>);

impl Roots {
    /// # Errors
    /// The I/O error of a root that cannot be canonicalised (it must exist).
    pub fn new(dirs: &[PathBuf]) -> std::io::Result<Self> {
        let mut roots = Vec::new();
        for dir in dirs {
            roots.push(dir.canonicalize().map_err(|e| {
                std::io::Error::new(e.kind(), format!("root {}: {e}", dir.display()))
            })?);
        }
        Ok(Self(roots))
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.0
    }

    /// The canonical directory `requested` names, if it is allowed.
    ///
    /// # Errors
    /// [`PathRefused`] saying which rule it broke.
    pub fn confine(&self, requested: &str) -> Result<PathBuf, PathRefused> {
        lexical(requested)?;
        let canonical = Path::new(requested)
            .canonicalize()
            .map_err(|_| PathRefused::Missing)?;
        if !self.0.iter().any(|root| canonical.starts_with(root)) {
            return Err(PathRefused::OutsideRoots);
        }
        if !canonical.is_dir() {
            return Err(PathRefused::NotDirectory);
        }
        Ok(canonical)
    }
}

/// What a repository in a request names: a remote URL (the worker clones it), or a
/// directory of this machine — a path, or a `file://` URL, which is a path all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoRef {
    Remote(String),
    Local(PathBuf),
}

impl RepoRef {
    /// The repository as a task records it: the URL, or the canonical path.
    pub fn into_string(self) -> String {
        match self {
            RepoRef::Remote(url) => url,
            RepoRef::Local(path) => path.display().to_string(),
        }
    }
}

impl Roots {
    /// The repository `requested` names, if a request may name it: a remote URL
    /// (`https://`, `ssh://`, `git://`, `git@host:path`), or a directory inside the roots
    /// (a path, or a `file://` URL, kept as the URL so the worker clones it). One rule for
    /// every endpoint that takes a repository or a workdir.
    ///
    /// # Errors
    /// [`PathRefused`] saying which rule a local path broke.
    pub fn repository(&self, requested: &str) -> Result<RepoRef, PathRefused> {
        if let Some(path) = requested.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(PathRefused::FileUrl);
            }
            self.confine(path)?;
            return Ok(RepoRef::Remote(requested.to_owned()));
        }
        if forge_domain::task::is_repository_url(requested) {
            return Ok(RepoRef::Remote(requested.to_owned()));
        }
        self.confine(requested).map(RepoRef::Local)
    }

    /// The roots as a message shows them: `/a, /b`.
    pub fn shown(&self) -> String {
        let dirs: Vec<String> = self.0.iter().map(|d| d.display().to_string()).collect();
        dirs.join(", ")
    }
}

/// The rules that need no file system.
fn lexical(requested: &str) -> Result<(), PathRefused> {
    if requested.is_empty() {
        return Err(PathRefused::Empty);
    }
    if requested.contains('\0') {
        return Err(PathRefused::Nul);
    }
    if encoded_traversal(requested) {
        return Err(PathRefused::Encoded);
    }
    let path = Path::new(requested);
    if !path.is_absolute() {
        return Err(PathRefused::Relative);
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(PathRefused::ParentDir);
    }
    Ok(())
}

/// `%2e%2e`, `%2f`, `%00` and friends: a client that encodes a separator, a dot or NUL in a
/// path it sends as JSON or an already-decoded query means to get past a check.
fn encoded_traversal(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["%2e", "%2f", "%5c", "%00", "%25"]
        .iter()
        .any(|needle| lower.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(roots: &Roots, requested: &str, expected: Result<&Path, PathRefused>) {
        let got = roots.confine(requested);
        assert_eq!(
            got.as_deref().map_err(Clone::clone),
            expected,
            "{requested:?}"
        );
    }

    #[test]
    fn a_repository_is_a_remote_url_or_a_directory_inside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let inside = root.join("app");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root)).unwrap();
        let check = |requested: &str, expected: Result<RepoRef, PathRefused>| {
            assert_eq!(roots.repository(requested), expected, "{requested:?}");
        };
        let remote = |u: &str| Ok(RepoRef::Remote(u.to_owned()));
        check(
            "https://github.com/o/r.git",
            remote("https://github.com/o/r.git"),
        );
        check("ssh://git@host/o/r.git", remote("ssh://git@host/o/r.git"));
        check("git@github.com:o/r.git", remote("git@github.com:o/r.git"));
        check(
            &inside.display().to_string(),
            Ok(RepoRef::Local(inside.clone())),
        );
        let inside_url = format!("file://{}", inside.display());
        check(&inside_url, remote(&inside_url));
        // Look-alikes that are local paths, and local paths outside the roots.
        check("/etc", Err(PathRefused::OutsideRoots));
        check("file:///etc", Err(PathRefused::OutsideRoots));
        check(
            &format!("file://{}", base.join("outside").display()),
            Err(PathRefused::OutsideRoots),
        );
        check("file://etc", Err(PathRefused::FileUrl));
        check("app", Err(PathRefused::Relative));
        check("./x:y", Err(PathRefused::Relative));
        check(
            &format!("{}/a@b:c", base.display()),
            Err(PathRefused::Missing),
        );
        check("", Err(PathRefused::Empty));
    }

    #[test]
    fn paths_outside_the_roots_or_with_traversal_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let inside = root.join("project");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::create_dir_all(base.join("root-sibling")).unwrap();
        std::fs::write(root.join("file.txt"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root.join("escape")).unwrap();
        std::os::unix::fs::symlink(&inside, root.join("alias")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root)).unwrap();
        let s = |p: &Path| p.display().to_string();

        // Allowed, including a symlink that stays inside.
        check(&roots, &s(&root), Ok(&root));
        check(&roots, &s(&inside), Ok(&inside));
        check(&roots, &format!("{}/", s(&inside)), Ok(&inside));
        check(&roots, &s(&root.join("alias")), Ok(&inside));
        check(&roots, &s(&root.join("./project")), Ok(&inside));
        // Refused.
        check(&roots, "", Err(PathRefused::Empty));
        check(&roots, "project", Err(PathRefused::Relative));
        check(&roots, "./project", Err(PathRefused::Relative));
        check(
            &roots,
            &format!("{}/../outside", s(&root)),
            Err(PathRefused::ParentDir),
        );
        check(
            &roots,
            &format!("{}/project/../..", s(&root)),
            Err(PathRefused::ParentDir),
        );
        check(
            &roots,
            &format!("{}/%2e%2e/outside", s(&root)),
            Err(PathRefused::Encoded),
        );
        check(
            &roots,
            &format!("{}/%2E%2E%2Foutside", s(&root)),
            Err(PathRefused::Encoded),
        );
        check(
            &roots,
            &format!("{}%2f..", s(&root)),
            Err(PathRefused::Encoded),
        );
        check(
            &roots,
            &format!("{}/project\0/x", s(&root)),
            Err(PathRefused::Nul),
        );
        check(
            &roots,
            &s(&root.join("escape")),
            Err(PathRefused::OutsideRoots),
        );
        check(
            &roots,
            &s(&base.join("outside")),
            Err(PathRefused::OutsideRoots),
        );
        check(
            &roots,
            &format!("{}-sibling", s(&root)),
            Err(PathRefused::OutsideRoots),
        );
        check(&roots, "/etc", Err(PathRefused::OutsideRoots));
        check(&roots, &s(&root.join("missing")), Err(PathRefused::Missing));
        check(
            &roots,
            &s(&root.join("file.txt")),
            Err(PathRefused::NotDirectory),
        );
    }
}
