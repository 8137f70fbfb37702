//! The change under review, read from git's unified diff (`base...head`, renames found,
//! three lines of context as a pull request shows them), and where a finding's lines fall:
//! inside one hunk of the new file (an inline comment may go there), or not.

use serde::{Deserialize, Serialize};

use crate::task::change::ChangeKind;
use crate::task::review::{AddedLine, ChangedFile};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffChange {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// The new file's side of one hunk: lines `new_start .. new_start + new_lines`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    pub new_start: u32,
    pub new_lines: u32,
}

impl Hunk {
    fn holds(&self, line: u32) -> bool {
        self.new_lines > 0 && line >= self.new_start && line - self.new_start < self.new_lines
    }
}

/// One file of the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFile {
    /// The new path (the old one for a deleted file).
    pub path: String,
    /// The path before a rename.
    pub old_path: Option<String>,
    pub change: DiffChange,
    pub hunks: Vec<Hunk>,
    pub added_lines: Vec<AddedLine>,
    pub added: u64,
    pub removed: u64,
    pub binary: bool,
    /// This file's part of the diff, as git printed it.
    pub patch: String,
}

/// Where a finding's lines fall in the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Every line of the range is inside one hunk of the new file.
    Inline,
    /// The file changed, but not there (or the range crosses hunks).
    OutsideHunks,
    /// The file was deleted: there is no new line to comment on.
    DeletedFile,
    /// The path is not part of the change.
    NotInChange,
    /// The finding names no line (a whole file, or the whole change).
    NoLine,
}

impl Placement {
    /// Why a finding that is not inline goes into the review's body.
    pub fn reason(self) -> &'static str {
        match self {
            Placement::Inline => "",
            Placement::OutsideHunks => "on lines this change did not touch",
            Placement::DeletedFile => "in a file this change deletes",
            Placement::NotInChange => "in a file outside this change",
            Placement::NoLine => "not about one line",
        }
    }
}

/// Where `line..=end_line` of `path` falls.
pub fn place(
    files: &[DiffFile],
    path: &str,
    line: Option<u32>,
    end_line: Option<u32>,
) -> Placement {
    let Some(file) = files.iter().find(|f| f.path == path) else {
        return Placement::NotInChange;
    };
    if file.change == DiffChange::Deleted {
        return Placement::DeletedFile;
    }
    let Some(first) = line else {
        return Placement::NoLine;
    };
    let last = end_line.filter(|&e| e >= first).unwrap_or(first);
    let inside = file.hunks.iter().any(|h| h.holds(first) && h.holds(last));
    if inside {
        Placement::Inline
    } else {
        Placement::OutsideHunks
    }
}

/// The files of a `git diff` patch, in its order.
pub fn parse_patch(patch: &str) -> Vec<DiffFile> {
    let mut files: Vec<DiffFile> = Vec::new();
    // Lines of the current hunk still to come: (old side, new side).
    let mut remaining = (0u32, 0u32);
    let mut next_new = 0u32;
    for line in patch.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        if let Some(header) = text.strip_prefix("diff --git ") {
            files.push(DiffFile {
                path: path_in_header(header),
                old_path: None,
                change: DiffChange::Modified,
                hunks: Vec::new(),
                added_lines: Vec::new(),
                added: 0,
                removed: 0,
                binary: false,
                patch: String::new(),
            });
            remaining = (0, 0);
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        file.patch.push_str(line);
        if remaining != (0, 0) {
            match text.as_bytes().first() {
                Some(b'+') => {
                    file.added_lines.push(AddedLine {
                        line: next_new,
                        text: text[1..].to_owned(),
                    });
                    file.added += 1;
                    next_new = next_new.saturating_add(1);
                    remaining.1 = remaining.1.saturating_sub(1);
                }
                Some(b'-') => {
                    file.removed += 1;
                    remaining.0 = remaining.0.saturating_sub(1);
                }
                Some(b'\\') => {}
                _ => {
                    next_new = next_new.saturating_add(1);
                    remaining.0 = remaining.0.saturating_sub(1);
                    remaining.1 = remaining.1.saturating_sub(1);
                }
            }
            continue;
        }
        if let Some(header) = text.strip_prefix("@@ ") {
            if let Some((old_lines, hunk)) = hunk_header(header) {
                remaining = (old_lines, hunk.new_lines);
                next_new = hunk.new_start;
                file.hunks.push(hunk);
            }
        } else if text.starts_with("new file mode") {
            file.change = DiffChange::Added;
        } else if text.starts_with("deleted file mode") {
            file.change = DiffChange::Deleted;
        } else if let Some(from) = text.strip_prefix("rename from ") {
            file.old_path = Some(from.to_owned());
            file.change = DiffChange::Renamed;
        } else if let Some(to) = text.strip_prefix("rename to ") {
            to.clone_into(&mut file.path);
        } else if text.starts_with("Binary files ") {
            file.binary = true;
        } else if let Some(new) = text.strip_prefix("+++ ") {
            if let Some(path) = side_path(new, "b/") {
                file.path = path;
            }
        } else if let Some(old) = text.strip_prefix("--- ") {
            // A deleted file keeps its old name (`+++ /dev/null`).
            if let Some(path) = side_path(old, "a/")
                && file.change == DiffChange::Deleted
            {
                file.path = path;
            }
        }
    }
    files
}

/// `a/x b/x` → `x` (the new side; a name with ` b/` in it is settled by `+++` or
/// `rename to` later).
fn path_in_header(header: &str) -> String {
    match header.rfind(" b/") {
        Some(at) => header[at + 3..].to_owned(),
        None => header.to_owned(),
    }
}

/// `b/path` (git adds a tab after a name with spaces) → `path`; `/dev/null` → none.
fn side_path(text: &str, prefix: &str) -> Option<String> {
    let text = text.trim_end_matches('\t');
    if text == "/dev/null" {
        return None;
    }
    Some(text.strip_prefix(prefix).unwrap_or(text).to_owned())
}

/// `-a,b +c,d @@ …` → (b, Hunk {c, d}); a missing count is 1.
fn hunk_header(header: &str) -> Option<(u32, Hunk)> {
    let mut parts = header.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let count = |range: &str| -> Option<(u32, u32)> {
        let mut it = range.split(',');
        let start = it.next()?.parse().ok()?;
        let lines = match it.next() {
            Some(n) => n.parse().ok()?,
            None => 1,
        };
        Some((start, lines))
    };
    let (_, old_lines) = count(old)?;
    let (new_start, new_lines) = count(new)?;
    Some((
        old_lines,
        Hunk {
            new_start,
            new_lines,
        },
    ))
}

/// The files as the task pipeline's review rules read them (a rename is a modification of
/// its new path; the size is not known from a diff).
pub fn changed_files(files: &[DiffFile]) -> Vec<ChangedFile> {
    files
        .iter()
        .map(|f| ChangedFile {
            path: f.path.clone(),
            change: match f.change {
                DiffChange::Added => ChangeKind::Added,
                DiffChange::Deleted => ChangeKind::Deleted,
                DiffChange::Modified | DiffChange::Renamed => ChangeKind::Modified,
            },
            size_bytes: None,
            added: f.added,
            removed: f.removed,
            added_lines: f.added_lines.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A patch as `git diff -M` prints it: a modified file with two hunks, a rename with an
    /// edit, a pure rename, a new file, a deleted file, a binary file, a name with a space.
    pub(crate) const PATCH: &str = "\
diff --git a/app/db.py b/app/db.py
index 1111111..2222222 100644
--- a/app/db.py
+++ b/app/db.py
@@ -4,7 +4,7 @@ import sqlite3
 
 def find(cur, name):
     # Look the user up.
-    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))
+    cur.execute(\"SELECT * FROM users WHERE name = '\" + name + \"'\")
     return cur.fetchone()
 
 
@@ -30,1 +30,3 @@ def close(cur):
     cur.close()
+
+# end
\\ No newline at end of file
diff --git a/old/util.py b/lib/util.py
similarity index 90%
rename from old/util.py
rename to lib/util.py
index 3333333..4444444 100644
--- a/old/util.py
+++ b/lib/util.py
@@ -1 +1,2 @@
 def helper():
+    return 1
diff --git a/a.txt b/b.txt
similarity index 100%
rename from a.txt
rename to b.txt
diff --git a/config.py b/config.py
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/config.py
@@ -0,0 +1,2 @@
+AWS_ACCESS_KEY_ID = \"AKIAZ7Q4R2W9X3YT5PLM\"
+--- not a header
diff --git a/gone.py b/gone.py
deleted file mode 100644
index 6666666..0000000
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x = 1
--- y = 2
diff --git a/logo.png b/logo.png
index 7777777..8888888 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/docs/read me.md b/docs/read me.md
index 9999999..aaaaaaa 100644
--- a/docs/read me.md\t
+++ b/docs/read me.md\t
@@ -2,0 +3 @@ title
+new line
";

    /// path, old path, change, hunks, added, removed, binary.
    type Summary = (
        String,
        Option<String>,
        DiffChange,
        Vec<(u32, u32)>,
        u64,
        u64,
        bool,
    );

    #[test]
    fn a_patch_reads_as_its_files() {
        let files = parse_patch(PATCH);
        let summary: Vec<Summary> = files
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    f.old_path.clone(),
                    f.change,
                    f.hunks.iter().map(|h| (h.new_start, h.new_lines)).collect(),
                    f.added,
                    f.removed,
                    f.binary,
                )
            })
            .collect();
        use DiffChange::*;
        let s = |x: &str| x.to_owned();
        assert_eq!(
            summary,
            vec![
                (
                    s("app/db.py"),
                    None,
                    Modified,
                    vec![(4, 7), (30, 3)],
                    3,
                    1,
                    false
                ),
                (
                    s("lib/util.py"),
                    Some(s("old/util.py")),
                    Renamed,
                    vec![(1, 2)],
                    1,
                    0,
                    false
                ),
                (s("b.txt"), Some(s("a.txt")), Renamed, vec![], 0, 0, false),
                (s("config.py"), None, Added, vec![(1, 2)], 2, 0, false),
                (s("gone.py"), None, Deleted, vec![(0, 0)], 0, 2, false),
                (s("logo.png"), None, Modified, vec![], 0, 0, true),
                (
                    s("docs/read me.md"),
                    None,
                    Modified,
                    vec![(3, 1)],
                    1,
                    0,
                    false
                ),
            ]
        );
        let db = &files[0];
        assert_eq!(
            db.added_lines
                .iter()
                .map(|l| (l.line, l.text.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (
                    7,
                    "    cur.execute(\"SELECT * FROM users WHERE name = '\" + name + \"'\")"
                ),
                (31, ""),
                (32, "# end"),
            ]
        );
        // A `+` line whose text starts like a header is content.
        assert_eq!(files[3].added_lines[1].text, "--- not a header");
        assert!(files[0].patch.starts_with("diff --git a/app/db.py"));
        assert!(files[0].patch.ends_with("\\ No newline at end of file\n"));
    }

    #[test]
    fn findings_are_placed_inside_or_outside_the_hunks() {
        let files = parse_patch(PATCH);
        use Placement::*;
        for (path, line, end, expected) in [
            // Inside a hunk, at its edges, just outside them.
            ("app/db.py", Some(7), None, Inline),
            ("app/db.py", Some(4), Some(4), Inline),
            ("app/db.py", Some(10), None, Inline),
            ("app/db.py", Some(3), None, OutsideHunks),
            ("app/db.py", Some(11), None, OutsideHunks),
            ("app/db.py", Some(4), Some(10), Inline),
            ("app/db.py", Some(9), Some(30), OutsideHunks),
            ("app/db.py", Some(32), None, Inline),
            ("app/db.py", Some(33), None, OutsideHunks),
            ("app/db.py", Some(1), None, OutsideHunks),
            ("app/db.py", None, None, NoLine),
            // An end before the start counts as the start alone.
            ("app/db.py", Some(7), Some(2), Inline),
            // Renames: the new path is in the change, the old one is not.
            ("lib/util.py", Some(2), None, Inline),
            ("old/util.py", Some(2), None, NotInChange),
            ("b.txt", Some(1), None, OutsideHunks),
            // New, deleted, binary, spaced files; files outside the change.
            ("config.py", Some(1), Some(2), Inline),
            ("config.py", Some(3), None, OutsideHunks),
            ("gone.py", Some(1), None, DeletedFile),
            ("logo.png", Some(1), None, OutsideHunks),
            ("docs/read me.md", Some(3), None, Inline),
            ("docs/read me.md", Some(2), None, OutsideHunks),
            ("README.md", Some(1), None, NotInChange),
            ("", None, None, NotInChange),
        ] {
            assert_eq!(
                place(&files, path, line, end),
                expected,
                "{path} {line:?}-{end:?}"
            );
        }
    }

    #[test]
    fn the_rules_read_the_diffs_files() {
        let files = parse_patch(PATCH);
        let report = crate::task::review::review(
            &changed_files(&files),
            &crate::task::review::ReviewLimits::default(),
        );
        let rules: Vec<(&str, &str, Option<u32>)> = report
            .findings
            .iter()
            .map(|f| (f.rule.as_str(), f.path.as_str(), f.line))
            .collect();
        assert_eq!(rules, vec![("secret.aws_access_key", "config.py", Some(1))]);
    }
}
