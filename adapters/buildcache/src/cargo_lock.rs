//! Seeding from a checkout's `target/` while cargo may be building in it: cargo holds each
//! build directory's `.cargo-lock` (`target/debug/.cargo-lock`, `target/<triple>/release/…`)
//! exclusively while it builds. A shared lock on each makes seeding wait for a build in
//! progress, and a build that starts meanwhile wait for the copy ("Blocking waiting for
//! file lock on build directory"), so no half-written artifact is copied.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use forge_domain::ForgeError;
use nix::fcntl::{Flock, FlockArg};

use crate::io;

const LOCK_FILE: &str = ".cargo-lock";
const POLL: Duration = Duration::from_millis(100);

/// Held while the checkout's `target/` is read; the builds go on once it is dropped.
pub(crate) struct BuildLocks {
    _held: Vec<Flock<File>>,
}

/// Shared locks on every build directory's lock under `target`, waiting up to `wait` for
/// builds in progress; `None` when one is still building after that.
pub(crate) fn lock_builds(target: &Path, wait: Duration) -> Result<Option<BuildLocks>, ForgeError> {
    let deadline = Instant::now() + wait;
    let mut held = Vec::new();
    for path in lock_files(target) {
        let lock = loop {
            let file = File::open(&path).map_err(|e| io(&path, e))?;
            match Flock::lock(file, FlockArg::LockSharedNonblock) {
                Ok(lock) => break lock,
                Err((_, nix::errno::Errno::EWOULDBLOCK)) if Instant::now() < deadline => {
                    std::thread::sleep(POLL);
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Ok(None),
                Err((_, e)) => return Err(io(&path, e)),
            }
        };
        held.push(lock);
    }
    Ok(Some(BuildLocks { _held: held }))
}

/// `target/<profile>/.cargo-lock` and `target/<triple>/<profile>/.cargo-lock`.
fn lock_files(target: &Path) -> Vec<PathBuf> {
    let dirs = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found = Vec::new();
    for dir in dirs(target) {
        for candidate in std::iter::once(dir.clone()).chain(dirs(&dir)) {
            let lock = candidate.join(LOCK_FILE);
            if lock.is_file() {
                found.push(lock);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target_with_locks(rels: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for rel in rels {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"").unwrap();
        }
        dir
    }

    #[test]
    fn every_build_directory_lock_is_found_and_nothing_else() {
        let dir = target_with_locks(&[
            "debug/.cargo-lock",
            "release/.cargo-lock",
            "x86_64-unknown-linux-gnu/debug/.cargo-lock",
            // Look-alikes: deeper, or another name.
            "debug/build/x/.cargo-lock",
            "debug/cargo-lock",
        ]);
        let rels: Vec<String> = lock_files(dir.path())
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            rels,
            [
                "debug/.cargo-lock",
                "release/.cargo-lock",
                "x86_64-unknown-linux-gnu/debug/.cargo-lock"
            ]
        );
    }

    #[test]
    fn a_build_in_progress_is_waited_for_and_then_blocks_on_the_copy() {
        let dir = target_with_locks(&["debug/.cargo-lock"]);
        let lock = dir.path().join("debug/.cargo-lock");
        // cargo building: its exclusive lock.
        let building = Flock::lock(File::open(&lock).unwrap(), FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| e)
            .unwrap();
        assert!(lock_builds(dir.path(), Duration::ZERO).unwrap().is_none());
        drop(building);
        let seeding = lock_builds(dir.path(), Duration::ZERO).unwrap();
        assert!(seeding.is_some());
        // A build starting now waits for the copy.
        let build = Flock::lock(File::open(&lock).unwrap(), FlockArg::LockExclusiveNonblock);
        assert!(build.is_err());
        drop(seeding);
        let build = Flock::lock(File::open(&lock).unwrap(), FlockArg::LockExclusiveNonblock);
        assert!(build.is_ok());
    }
}
