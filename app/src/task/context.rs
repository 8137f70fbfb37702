//! Stage 4: the context, gathered in parallel (one `join`): the repository index summary
//! (not for FIX), the baseline validation on the untouched work tree, the goal and the
//! research notes. Each part is timed for the plan.

use forge_ports::{EntryKind, IndexEntry};
use serde::Serialize;

/// The index summary's size cap (characters).
pub const INDEX_CAP: usize = 3000;
/// Entries read from the walk at most (the summary shows far fewer).
pub const INDEX_LIMIT: usize = 20_000;

/// How long one context part took and how big it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextPart {
    pub name: &'static str,
    pub duration_ms: u64,
    pub chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A tree of the entries with sizes and kinds, one per line, indented by depth, cut at
/// `cap` characters with a closing line saying how many entries were left out.
pub fn index_summary(entries: &[IndexEntry], cap: usize) -> String {
    let files = entries.iter().filter(|e| e.kind == EntryKind::File).count();
    let bytes: u64 = entries.iter().map(|e| e.size).sum();
    let mut out = format!("{files} files, {} KiB\n", bytes.div_ceil(1024));
    for (shown, entry) in entries.iter().enumerate() {
        let depth = entry.path.matches('/').count();
        let name = entry.path.rsplit('/').next().unwrap_or(&entry.path);
        let line = match entry.kind {
            EntryKind::Dir => format!("{}{name}/\n", "  ".repeat(depth)),
            EntryKind::Symlink => format!("{}{name} -> (link)\n", "  ".repeat(depth)),
            EntryKind::File => format!(
                "{}{name} ({})\n",
                "  ".repeat(depth),
                human_size(entry.size)
            ),
        };
        let rest = entries.len() - shown;
        let closing = format!("… {rest} more entries\n");
        if out.len() + line.len() + closing.len() > cap {
            out.push_str(&closing);
            break;
        }
        out.push_str(&line);
    }
    out.truncate(out.trim_end().len());
    out
}

fn human_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, kind: EntryKind, size: u64) -> IndexEntry {
        IndexEntry {
            path: path.into(),
            kind,
            size,
        }
    }

    #[test]
    fn summary_is_a_tree_and_respects_the_cap() {
        let entries = vec![
            entry("src", EntryKind::Dir, 0),
            entry("src/main.rs", EntryKind::File, 2048),
            entry("test.sh", EntryKind::File, 12),
        ];
        assert_eq!(
            index_summary(&entries, 3000),
            "2 files, 3 KiB\nsrc/\n  main.rs (2.0 KiB)\ntest.sh (12 B)"
        );
        let many: Vec<IndexEntry> = (0..1000)
            .map(|i| entry(&format!("f{i:04}.txt"), EntryKind::File, 1))
            .collect();
        let summary = index_summary(&many, 300);
        assert!(summary.len() <= 300, "{}", summary.len());
        assert!(summary.ends_with("more entries"), "{summary}");
    }
}
