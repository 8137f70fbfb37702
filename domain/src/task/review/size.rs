//! Size rules: oversized files and mass deletions.

use super::input::ChangedFile;
use super::{ReviewLimits, finding, rule};
use crate::task::change::ChangeKind;
use crate::task::finding::Finding;

pub fn check_file(file: &ChangedFile, limits: &ReviewLimits, out: &mut Vec<Finding>) {
    if file.change == ChangeKind::Deleted {
        return;
    }
    let bytes = file.size_bytes.unwrap_or(0);
    if bytes > limits.max_file_bytes {
        out.push(finding(
            rule::OVERSIZED_FILE,
            &file.path,
            None,
            format!(
                "{bytes} bytes, above the {} byte limit",
                limits.max_file_bytes
            ),
        ));
    } else if file.added > limits.max_added_lines {
        out.push(finding(
            rule::OVERSIZED_FILE,
            &file.path,
            None,
            format!(
                "{} added lines, above the {} line limit",
                file.added, limits.max_added_lines
            ),
        ));
    }
}

/// Many deleted files, or many removed lines with few added back.
pub fn check_change(files: &[ChangedFile], limits: &ReviewLimits, out: &mut Vec<Finding>) {
    let deleted = files
        .iter()
        .filter(|f| f.change == ChangeKind::Deleted)
        .count();
    let removed: u64 = files.iter().map(|f| f.removed).sum();
    let added: u64 = files.iter().map(|f| f.added).sum();
    if deleted >= limits.mass_deletion_files {
        out.push(finding(
            rule::MASS_DELETION,
            "",
            None,
            format!("{deleted} files deleted"),
        ));
    } else if removed >= limits.mass_deletion_lines && added.saturating_mul(2) < removed {
        out.push(finding(
            rule::MASS_DELETION,
            "",
            None,
            format!("{removed} lines removed, {added} added"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::task::change::ChangeKind;
    use crate::task::review::ChangedFile;
    use crate::task::review::tests::rules;

    fn changed(path: &str, change: ChangeKind, size: u64, added: u64, removed: u64) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            change,
            size_bytes: (change != ChangeKind::Deleted).then_some(size),
            added,
            removed,
            added_lines: vec![],
        }
    }

    fn check(files: Vec<ChangedFile>, expected: &[&str]) {
        assert_eq!(rules(&files), expected, "{files:?}");
    }

    #[test]
    fn size_rules() {
        use ChangeKind::*;
        let deletions = |n: usize| -> Vec<ChangedFile> {
            (0..n)
                .map(|i| changed(&format!("old/{i}.rs"), Deleted, 0, 0, 10))
                .collect()
        };
        for (files, expected) in [
            (
                vec![changed("data.json", Added, 1_000_001, 1, 0)],
                &["size.oversized_file"][..],
            ),
            (
                vec![changed("gen.rs", Modified, 10, 5_001, 0)],
                &["size.oversized_file"],
            ),
            (deletions(20), &["change.mass_deletion"]),
            (
                vec![changed("big.rs", Modified, 10, 100, 2_000)],
                &["change.mass_deletion"],
            ),
            // Look-alikes: at the limit, a deleted big file, a rewrite, 19 deletions.
            (vec![changed("data.json", Added, 1_000_000, 1, 0)], &[]),
            (vec![changed("gen.rs", Modified, 10, 5_000, 0)], &[]),
            (vec![changed("huge.bin", Deleted, 0, 0, 0)], &[]),
            (vec![changed("big.rs", Modified, 10, 1_900, 2_500)], &[]),
            (deletions(19), &[]),
        ] {
            check(files, expected);
        }
    }
}
