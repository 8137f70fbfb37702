//! The probe's verdict kept between forge processes: a trial sandbox costs as much as the
//! run's own, and every `run` is a new process. A success is kept with what it depends on —
//! bubblewrap's and `env`'s files, the user, the boot, the user namespace forge runs in and
//! the sysctls that allow user namespaces — and is probed again when any of them changed.
//! A failure is never kept: a machine that could not confine is asked again next time.
//!
//! If a kept success is wrong (a container's seccomp profile changed without any of these),
//! the run's own bubblewrap fails with its message: an error, never an unconfined run.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// The first line of the file: a format change reads as a miss.
const HEADER: &str = "forge sandbox probe v1";

/// What the verdict of a probe with `bwrap` and `env` depends on, read without starting
/// a process; `None` when bubblewrap's file cannot be read.
pub fn machine_key(bwrap: &Path, env: &Path) -> Option<String> {
    let mut parts = vec![file_key(bwrap)?, file_key(env)?];
    parts.push(format!("uid {}", effective_uid()));
    for path in [
        "/proc/sys/kernel/random/boot_id",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ] {
        let value = std::fs::read_to_string(path).unwrap_or_default();
        parts.push(format!("{path} {}", value.trim()));
    }
    let userns = std::fs::read_link("/proc/self/ns/user").unwrap_or_default();
    parts.push(format!("userns {}", userns.display()));
    Some(parts.join("; "))
}

fn file_key(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    Some(format!(
        "{} {} {} {}.{}",
        path.display(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    ))
}

fn effective_uid() -> u32 {
    // The effective user decides what bubblewrap may do (root needs no user namespace).
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// The version kept for `key`, if the file holds a success for exactly that key.
pub fn read(file: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut lines = text.lines();
    (lines.next()? == HEADER && lines.next()? == key).then(|| lines.next().unwrap_or("").to_owned())
}

/// Keeps a success; a file that cannot be written only means probing again next time.
pub fn write(file: &Path, key: &str, version: &str) {
    let Some(dir) = file.parent() else {
        return;
    };
    let result = std::fs::create_dir_all(dir)
        .and_then(|()| tempfile::NamedTempFile::new_in(dir))
        .and_then(|mut temp| {
            use std::io::Write as _;
            write!(temp, "{HEADER}\n{key}\n{version}\n")?;
            // A rename: a concurrent reader sees the old file or the new one, never half.
            temp.persist(file).map(drop).map_err(|e| e.error)
        });
    if let Err(err) = result {
        tracing::debug!(file = %file.display(), %err, "sandbox probe not kept");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_success_is_read_back_only_for_the_same_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cache/sandbox-probe");
        assert_eq!(read(&file, "k1"), None);
        write(&file, "k1", "bubblewrap 0.8.0");
        assert_eq!(read(&file, "k1").as_deref(), Some("bubblewrap 0.8.0"));
        assert_eq!(read(&file, "k2"), None);
        std::fs::write(&file, "something else\nk1\nv\n").unwrap();
        assert_eq!(read(&file, "k1"), None);
    }

    #[test]
    fn the_key_changes_with_the_bwrap_file() {
        let dir = tempfile::tempdir().unwrap();
        let bwrap = dir.path().join("bwrap");
        std::fs::write(&bwrap, "one").unwrap();
        let env = Path::new("/proc/self/exe");
        let before = machine_key(&bwrap, env).unwrap();
        assert_eq!(machine_key(&bwrap, env).as_deref(), Some(before.as_str()));
        std::fs::write(&bwrap, "a longer file").unwrap();
        assert_ne!(machine_key(&bwrap, env).unwrap(), before);
        assert_eq!(machine_key(&dir.path().join("missing"), env), None);
    }
}
