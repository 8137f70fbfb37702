//! Real `git` behind the `Vcs` port.

use std::path::Path;
use std::process::Command;

mod file_at;
mod is_repository;
mod review_range;

/// `git <args>` in `dir` with a throwaway identity; its trimmed stdout (a failure panics
/// with git's words).
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}
