//! An agent session's state as it travels with a task (issue 39): the CLI's own files of one
//! session (its transcript, the markers that tie it to a working directory), relative to the
//! CLI's home, so that a follow-up on another machine — another home, another work-tree path —
//! resumes the same session. Session files hold the conversation, never credentials: an
//! adapter exports only its session files, never an auth or config file.

use serde::{Deserialize, Serialize};

/// At most this many bytes of session files travel: a longer session is refused with a
/// reason (the follow-up then starts a new session given the conversation).
pub const MAX_ARCHIVE_BYTES: usize = 16 * 1024 * 1024;

/// One file of a session, at `path` relative to the CLI home (`/`-separated, never
/// absolute, never `..`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFile {
    pub path: String,
    pub text: String,
}

/// The session `session_id` of `provider`, as run in the work tree `workdir`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionArchive {
    pub provider: String,
    pub session_id: String,
    /// The work tree the session ran in (absolute): what the importer rewrites.
    pub workdir: String,
    pub files: Vec<SessionFile>,
}

/// Why an archive cannot be made or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveRefusal {
    #[error("session file {0:?} is not a path inside the CLI home")]
    UnsafePath(String),
    #[error("the session's files are {size} bytes, over the {max}-byte limit")]
    TooLarge { size: usize, max: usize },
    #[error("the archive holds no file of the session")]
    Empty,
}

impl SessionArchive {
    /// The archive's files' total size in bytes.
    pub fn size(&self) -> usize {
        self.files.iter().map(|f| f.path.len() + f.text.len()).sum()
    }

    /// Whether the archive may be stored and imported: some files, each inside the home,
    /// all together within [`MAX_ARCHIVE_BYTES`].
    ///
    /// # Errors
    /// The first [`ArchiveRefusal`] that applies.
    pub fn check(&self) -> Result<(), ArchiveRefusal> {
        if self.files.is_empty() {
            return Err(ArchiveRefusal::Empty);
        }
        if let Some(bad) = self.files.iter().find(|f| !is_relative_inside(&f.path)) {
            return Err(ArchiveRefusal::UnsafePath(bad.path.clone()));
        }
        let size = self.size();
        if size > MAX_ARCHIVE_BYTES {
            return Err(ArchiveRefusal::TooLarge {
                size,
                max: MAX_ARCHIVE_BYTES,
            });
        }
        Ok(())
    }
}

/// `path` names a file below its base: relative, no `.`/`..`/empty component, no `\`.
pub fn is_relative_inside(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// `text` with the work-tree path `from` replaced by `to` where it stands as a whole path
/// (followed by nothing, `/`, `"` or a character that cannot continue a path name), so a
/// transcript's `cwd` and file paths name the new work tree; `/w/a` in `/w/ab` stays.
pub fn rewrite_workdir(text: &str, from: &str, to: &str) -> String {
    if from.is_empty() || from == to {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let after = &rest[at + from.len()..];
        let whole = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')));
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_inside_the_home_are_accepted() {
        let check = |path: &str, expected: bool| {
            assert_eq!(is_relative_inside(path), expected, "{path:?}");
        };
        check(".claude/projects/-w/s.jsonl", true);
        check("a", true);
        check("", false);
        check("/etc/passwd", false);
        check("../x", false);
        check("a/../../x", false);
        check("a/./b", false);
        check("a//b", false);
        check("a\\..\\b", false);
    }

    #[test]
    fn the_work_tree_is_rewritten_as_a_whole_path_only() {
        let check = |text: &str, expected: &str| {
            assert_eq!(rewrite_workdir(text, "/w/a", "/x/b"), expected, "{text:?}");
        };
        check(r#"{"cwd":"/w/a"}"#, r#"{"cwd":"/x/b"}"#);
        check("/w/a/src/x.rs and /w/a", "/x/b/src/x.rs and /x/b");
        check(r#"{"cwd":"/w/ab"}"#, r#"{"cwd":"/w/ab"}"#);
        check("/w/a-1 /w/a.b /w/a_c", "/w/a-1 /w/a.b /w/a_c");
        check("nothing here", "nothing here");
    }

    #[test]
    fn archives_are_checked_before_they_travel() {
        let file = |path: &str, text: &str| SessionFile {
            path: path.into(),
            text: text.into(),
        };
        let archive = |files: Vec<SessionFile>| SessionArchive {
            provider: "claude".into(),
            session_id: "s".into(),
            workdir: "/w".into(),
            files,
        };
        assert_eq!(archive(vec![]).check(), Err(ArchiveRefusal::Empty));
        assert_eq!(archive(vec![file("a/s.jsonl", "{}")]).check(), Ok(()));
        assert_eq!(
            archive(vec![file("a/../../.ssh/k", "")]).check(),
            Err(ArchiveRefusal::UnsafePath("a/../../.ssh/k".into()))
        );
        let big = "x".repeat(MAX_ARCHIVE_BYTES);
        assert!(matches!(
            archive(vec![file("a", &big)]).check(),
            Err(ArchiveRefusal::TooLarge { .. })
        ));
    }
}
