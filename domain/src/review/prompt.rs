//! What the agent is asked: review these files of the change (their diff), read whatever
//! else it needs in the repository, change nothing, and answer with one ` ```json ` block.
//! A change larger than the prompt budget is split into parts of whole files.

use super::diff::DiffFile;

/// The answer's shape, shown in every prompt.
pub const ANSWER_SHAPE: &str = r#"```json
{"findings": [{"path": "app/db.py", "line": 7, "end_line": 7, "severity": "high",
               "title": "…", "body": "…", "suggestion": "replacement lines or null"}]}
```"#;

/// The files of one part, and the diff text the prompt carries for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub paths: Vec<String>,
    pub diff: String,
    /// Files whose diff was cut to fit the budget.
    pub cut: Vec<String>,
}

/// The change in parts of whole files whose diffs add up to at most `budget` characters;
/// a file larger than the budget alone is one part, its diff cut to the budget.
pub fn chunks(files: &[DiffFile], budget: usize) -> Vec<Chunk> {
    let budget = budget.max(1);
    let mut parts: Vec<Chunk> = Vec::new();
    let mut current = Chunk {
        paths: Vec::new(),
        diff: String::new(),
        cut: Vec::new(),
    };
    for file in files {
        let size = file.patch.len();
        if !current.paths.is_empty() && current.diff.len() + size > budget {
            parts.push(std::mem::replace(
                &mut current,
                Chunk {
                    paths: Vec::new(),
                    diff: String::new(),
                    cut: Vec::new(),
                },
            ));
        }
        current.paths.push(file.path.clone());
        if size > budget {
            let mut end = budget;
            while !file.patch.is_char_boundary(end) {
                end -= 1;
            }
            current.diff.push_str(&file.patch[..end]);
            current
                .diff
                .push_str("\n[… the rest of this file's diff is cut: read the file itself]\n");
            current.cut.push(file.path.clone());
        } else {
            current.diff.push_str(&file.patch);
        }
    }
    if !current.paths.is_empty() {
        parts.push(current);
    }
    parts
}

/// The review prompt for one part (`part` of `parts`, 1-based).
pub fn review_prompt(base: &str, head: &str, chunk: &Chunk, part: usize, parts: usize) -> String {
    let scope = if parts > 1 {
        format!(
            "This change is reviewed in {parts} parts; this is part {part}, with these files: {}. Report findings for these files only.\n",
            chunk.paths.join(", ")
        )
    } else {
        String::new()
    };
    format!(
        "You are reviewing a pull request: the change from {base} to {head}. The repository is \
         checked out at the change's head in your working directory: read and search any file \
         you need, but do not modify anything and do not run commands that change files.\n\
         {scope}\n\
         Look for bugs, security problems (injection, secrets, unsafe input handling), data \
         loss, and clear maintainability problems in the changed code. Do not report style \
         nits.\n\n\
         Answer with exactly one fenced json block of this shape, and nothing after it:\n\
         {ANSWER_SHAPE}\n\
         Rules for the block: `path` is relative to the repository root; `line` and `end_line` \
         are 1-based lines of the file at the head; `severity` is one of critical, high, \
         medium, low, info; `suggestion` is the exact replacement text for lines \
         line..end_line (keep the indentation), or null; never repeat a secret's value. \
         With no findings, answer {{\"findings\": []}}.\n\n\
         The diff:\n\n{}",
        fenced_diff(&chunk.diff)
    )
}

/// The follow-up when the answer could not be read.
pub fn follow_up_prompt(problem: &str) -> String {
    format!(
        "Your previous answer could not be read: {problem}. Reply again with only the \
         findings, as exactly one fenced json block of this shape:\n{ANSWER_SHAPE}"
    )
}

fn fenced_diff(diff: &str) -> String {
    let fence = super::github::fence_for(diff);
    format!("{fence}diff\n{diff}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::diff::{DiffChange, DiffFile};

    fn file(path: &str, size: usize) -> DiffFile {
        DiffFile {
            path: path.to_owned(),
            old_path: None,
            change: DiffChange::Modified,
            hunks: Vec::new(),
            added_lines: Vec::new(),
            added: 0,
            removed: 0,
            binary: false,
            patch: "x".repeat(size),
        }
    }

    #[test]
    fn parts_hold_whole_files_within_the_budget() {
        let files = [
            file("a", 40),
            file("b", 50),
            file("c", 30),
            file("big", 250),
            file("d", 10),
        ];
        let parts = chunks(&files, 100);
        let got: Vec<(Vec<&str>, usize, Vec<&str>)> = parts
            .iter()
            .map(|c| {
                (
                    c.paths.iter().map(String::as_str).collect(),
                    c.diff.len(),
                    c.cut.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let note = "\n[… the rest of this file's diff is cut: read the file itself]\n".len();
        assert_eq!(
            got,
            vec![
                (vec!["a", "b"], 90, vec![]),
                (vec!["c"], 30, vec![]),
                (vec!["big"], 100 + note, vec!["big"]),
                (vec!["d"], 10, vec![]),
            ]
        );
        assert_eq!(chunks(&[], 100), vec![]);
        assert_eq!(chunks(&files, 10_000).len(), 1);
    }

    #[test]
    fn the_prompt_names_the_part_and_the_shape() {
        let parts = chunks(&[file("a", 3), file("b", 3)], 4);
        let prompt = review_prompt("origin/main", "HEAD", &parts[1], 2, 2);
        assert!(prompt.contains("part 2, with these files: b."));
        assert!(prompt.contains("```json\n{\"findings\""));
        assert!(prompt.contains("```diff\nxxx\n```"));
        assert!(!review_prompt("a", "b", &parts[0], 1, 1).contains("parts"));
    }
}
