//! The change a run made in a work tree: `git diff HEAD` (name-status, numstat, `-U0`
//! patch) plus untracked files (`git ls-files --others --exclude-standard`), whose lines
//! are read from disk and all count as added.

use std::collections::BTreeMap;
use std::path::Path;

use forge_domain::ForgeError;
use forge_ports::{AddedLines, PathChange, PathChangeKind};

use crate::git_cli::{GitCli, nul_fields};

/// Paths exactly as stored (no `"\303\251"` quoting), no rename pairing, no colour.
const DIFF: &[&str] = &[
    "-c",
    "core.quotePath=false",
    "diff",
    "--no-renames",
    "--no-color",
    "--no-ext-diff",
];

/// Untracked files bigger than this are counted but not read line by line.
const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

pub(crate) async fn changes(git: &GitCli, dir: &Path) -> Result<Vec<PathChange>, ForgeError> {
    let status = git
        .git_ok(
            dir,
            &[DIFF, &["--name-status", "-z", "HEAD"]].concat(),
            None,
        )
        .await?;
    let numstat = git
        .git_ok(dir, &[DIFF, &["--numstat", "-z", "HEAD"]].concat(), None)
        .await?;
    let mut by_path: BTreeMap<String, PathChange> = BTreeMap::new();
    for (kind, path) in parse_name_status(&status) {
        by_path.insert(
            path.clone(),
            PathChange {
                path,
                kind,
                added: 0,
                removed: 0,
                size: None,
            },
        );
    }
    for (added, removed, path) in parse_numstat(&numstat) {
        if let Some(change) = by_path.get_mut(&path) {
            change.added = added;
            change.removed = removed;
        }
    }
    for path in untracked(git, dir).await? {
        let added = match read_text(&dir.join(&path)) {
            Some(text) => count_lines(&text),
            None => 0,
        };
        by_path.insert(
            path.clone(),
            PathChange {
                path,
                kind: PathChangeKind::Added,
                added,
                removed: 0,
                size: None,
            },
        );
    }
    let mut found: Vec<PathChange> = by_path.into_values().collect();
    for change in &mut found {
        if change.kind != PathChangeKind::Deleted {
            change.size = std::fs::symlink_metadata(dir.join(&change.path))
                .ok()
                .map(|m| m.len());
        }
    }
    Ok(found)
}

pub(crate) async fn added_lines(git: &GitCli, dir: &Path) -> Result<Vec<AddedLines>, ForgeError> {
    let patch = git
        .git_ok(dir, &[DIFF, &["-U0", "HEAD"]].concat(), None)
        .await?;
    let mut files = parse_added_lines(&patch);
    for path in untracked(git, dir).await? {
        if let Some(text) = read_text(&dir.join(&path)) {
            let lines = text
                .lines()
                .enumerate()
                .map(|(i, l)| (u32::try_from(i + 1).unwrap_or(u32::MAX), l.to_owned()))
                .collect();
            files.push(AddedLines { path, lines });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

async fn untracked(git: &GitCli, dir: &Path) -> Result<Vec<String>, ForgeError> {
    let out = git
        .git_ok(
            dir,
            &[
                "-c",
                "core.quotePath=false",
                "ls-files",
                "--others",
                "--exclude-standard",
                "-z",
            ],
            None,
        )
        .await?;
    Ok(nul_fields(&out)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect())
}

/// The file's text; `None` for binary (a NUL byte), unreadable or huge files.
fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_READ_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn count_lines(text: &str) -> u64 {
    u64::try_from(text.lines().count()).unwrap_or(u64::MAX)
}

/// `M\0path\0A\0path\0…`
pub(crate) fn parse_name_status(out: &str) -> Vec<(PathChangeKind, String)> {
    let mut parts = nul_fields(out);
    let mut found = Vec::new();
    while let (Some(status), Some(path)) = (parts.next(), parts.next()) {
        let kind = match status.chars().next() {
            Some('A') => PathChangeKind::Added,
            Some('D') => PathChangeKind::Deleted,
            Some(_) => PathChangeKind::Modified,
            None => continue,
        };
        found.push((kind, path.to_owned()));
    }
    found
}

/// `added\tremoved\tpath\0…`; binary files show `-` and count 0.
pub(crate) fn parse_numstat(out: &str) -> Vec<(u64, u64, String)> {
    nul_fields(out)
        .filter_map(|record| {
            let mut fields = record.splitn(3, '\t');
            let added = fields.next()?.trim_start_matches('\n');
            let removed = fields.next()?;
            let path = fields.next()?;
            Some((
                added.parse().unwrap_or(0),
                removed.parse().unwrap_or(0),
                path.to_owned(),
            ))
        })
        .collect()
}

/// The `+` lines of a `-U0` patch with their new-file line numbers.
pub(crate) fn parse_added_lines(patch: &str) -> Vec<AddedLines> {
    let mut files: Vec<AddedLines> = Vec::new();
    let mut next_line: u32 = 0;
    for line in patch.lines() {
        if line.starts_with("diff --git ") {
            files.push(AddedLines {
                path: String::new(),
                lines: Vec::new(),
            });
        } else if let Some(path) = line.strip_prefix("+++ ") {
            if let Some(file) = files.last_mut() {
                file.path = path.strip_prefix("b/").unwrap_or(path).to_owned();
            }
        } else if line.starts_with("--- ") {
            // the old side's name: nothing to record
        } else if let Some(header) = line.strip_prefix("@@ ") {
            next_line = hunk_start(header).unwrap_or(0);
        } else if let Some(text) = line.strip_prefix('+') {
            if let Some(file) = files.last_mut() {
                file.lines.push((next_line, text.to_owned()));
                next_line = next_line.saturating_add(1);
            }
        }
    }
    files.retain(|f| !f.lines.is_empty() && f.path != "/dev/null" && !f.path.is_empty());
    files
}

/// `-a,b +c,d @@ …` → c.
fn hunk_start(header: &str) -> Option<u32> {
    let plus = header.split(' ').find(|p| p.starts_with('+'))?;
    plus[1..].split(',').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_kinds() {
        let got = parse_name_status("M\0src/a.rs\0A\0new file.txt\0D\0gone.md\0T\0link\0");
        assert_eq!(
            got,
            vec![
                (PathChangeKind::Modified, "src/a.rs".to_owned()),
                (PathChangeKind::Added, "new file.txt".to_owned()),
                (PathChangeKind::Deleted, "gone.md".to_owned()),
                (PathChangeKind::Modified, "link".to_owned()),
            ]
        );
    }

    #[test]
    fn a_trailing_newline_after_the_last_nul_is_no_field() {
        // The process port hands output on line by line, so `-z` output may end in `\n`.
        assert_eq!(
            parse_name_status("M\0a.txt\0A\0b c\0\n"),
            vec![
                (PathChangeKind::Modified, "a.txt".to_owned()),
                (PathChangeKind::Added, "b c".to_owned()),
            ]
        );
        assert_eq!(parse_numstat("1\t0\ta\0\n"), vec![(1, 0, "a".to_owned())]);
    }

    #[test]
    fn numstat_counts_and_binary_as_zero() {
        let got = parse_numstat("3\t1\tsrc/a.rs\0-\t-\timg.png\0");
        assert_eq!(
            got,
            vec![(3, 1, "src/a.rs".to_owned()), (0, 0, "img.png".to_owned())]
        );
    }

    #[test]
    fn added_lines_carry_new_file_line_numbers() {
        let patch = "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,0 +2,2 @@\n+two\n+three\n@@ -9 +10 @@\n-old\n+ten\ndiff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let got = parse_added_lines(patch);
        assert_eq!(
            got,
            vec![AddedLines {
                path: "a.txt".to_owned(),
                lines: vec![
                    (2, "two".to_owned()),
                    (3, "three".to_owned()),
                    (10, "ten".to_owned())
                ],
            }]
        );
    }
}
