//! The changed files with their part of the unified diff, for the page to colour. A file's
//! patch is kept whole; the page folds a large one (`large`) until asked.

use serde::Serialize;
use serde_json::Value;

/// Lines of patch above which a file starts folded on the page.
pub const LARGE_LINES: usize = 400;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileDiff {
    pub path: String,
    /// `added`, `modified` or `deleted` (the report's word).
    pub change: String,
    pub added: u64,
    pub removed: u64,
    /// The file's hunks (from its `diff --git` header on); `None` when no diff was read.
    pub patch: Option<String>,
    pub large: bool,
}

/// `(path, patch)` per file of a unified diff as `git diff` prints it (path: the `b/` side,
/// or the `a/` side of a deleted file).
pub fn split(diff: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let rest = rest.trim_end();
            let path = rest
                .split_once(" b/")
                .map(|(_, b)| b.to_owned())
                .or_else(|| rest.strip_prefix("a/").map(str::to_owned))
                .unwrap_or_else(|| rest.to_owned());
            files.push((path, String::new()));
        }
        if let Some((_, patch)) = files.last_mut() {
            patch.push_str(line);
        }
    }
    files
}

/// The report's files (`files`: path, change, added, removed) with their patches from
/// `diff` when one was read.
pub fn files(report: Option<&Value>, diff: Option<&str>) -> Vec<FileDiff> {
    let patches = diff.map(split).unwrap_or_default();
    let listed = report
        .and_then(|r| r.get("files"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out: Vec<FileDiff> = listed
        .iter()
        .filter_map(|f| {
            let path = f.get("path")?.as_str()?.to_owned();
            let patch = patches
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, d)| d.clone());
            Some(FileDiff {
                large: patch
                    .as_ref()
                    .is_some_and(|p| p.lines().count() > LARGE_LINES),
                change: f
                    .get("change")
                    .and_then(Value::as_str)
                    .unwrap_or("modified")
                    .to_owned(),
                added: f.get("added").and_then(Value::as_u64).unwrap_or(0),
                removed: f.get("removed").and_then(Value::as_u64).unwrap_or(0),
                patch,
                path,
            })
        })
        .collect();
    // A file the diff has and the report does not list (should not happen; shown anyway).
    for (path, patch) in patches {
        if out.iter().all(|f| f.path != path) {
            let (added, removed) = counts(&patch);
            out.push(FileDiff {
                large: patch.lines().count() > LARGE_LINES,
                change: "modified".to_owned(),
                added,
                removed,
                patch: Some(patch),
                path,
            });
        }
    }
    out
}

fn counts(patch: &str) -> (u64, u64) {
    let mut added = 0;
    let mut removed = 0;
    for line in patch.lines() {
        if line.starts_with('+') && !line.starts_with("+++") {
            added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            removed += 1;
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_splits_per_file() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let files = split(diff);
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "gone.txt"]);
        assert!(files[0].1.starts_with("diff --git a/src/a.rs"));
        assert!(files[0].1.ends_with("+new\n"));
        assert_eq!(counts(&files[1].1), (0, 1));
        // Look-alikes: a line that mentions a diff inside a hunk is not a header.
        let inner = "diff --git a/x b/x\n@@ -1 +1 @@\n+ diff --git a/y b/y\n";
        assert_eq!(split(inner).len(), 1);
        assert!(split("").is_empty());
        assert!(split("no diff here\n").is_empty());
    }
}
