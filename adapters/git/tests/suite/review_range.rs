//! The review's git operations with the real git: merge base, the diff between two commits
//! (whole, however large), a detached work tree at the head.

use std::path::Path;
use std::sync::Arc;

use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_domain::review::{DiffChange, parse_patch};
use forge_ports::Vcs;

use super::git;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn merge_base_diff_and_a_detached_tree_at_the_head() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    write(&repo, "a.txt", &body);
    write(&repo, "old name.txt", "same\ncontent\nhere\n");
    write(&repo, "gone.txt", "bye\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-qb", "feature"]);
    write(&repo, "a.txt", &body.replace("line 10\n", "line ten\n"));
    git(&repo, &["mv", "old name.txt", "new name.txt"]);
    git(&repo, &["rm", "-q", "gone.txt"]);
    // A file far larger than the process port's stdout capture.
    let big: String = (0..60_000)
        .map(|i| format!("generated line {i:08}\n"))
        .collect();
    write(&repo, "big.txt", &big);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "feature"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    // main moves on: the review diffs from the merge base, not from main's tip.
    git(&repo, &["checkout", "-q", "main"]);
    write(&repo, "main-only.txt", "x\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "main moves"]);
    let main = git(&repo, &["rev-parse", "HEAD"]);

    let vcs = GitCli::new(Arc::new(TokioProcessRunner::new()));
    let merge_base = vcs.merge_base(&repo, &main, &head).await.unwrap();
    assert_eq!(merge_base.as_deref(), Some(base.as_str()));
    let patch = vcs.diff(&repo, &base, &head).await.unwrap();
    assert!(patch.len() > 1_500_000, "{} bytes", patch.len());
    let files = parse_patch(&patch);
    let got: Vec<(&str, DiffChange, u64)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.change, f.added))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a.txt", DiffChange::Modified, 1),
            ("big.txt", DiffChange::Added, 60_000),
            ("gone.txt", DiffChange::Deleted, 0),
            ("new name.txt", DiffChange::Renamed, 0),
        ]
    );
    assert_eq!(files[0].hunks[0].new_start, 7);
    assert_eq!(files[0].added_lines[0].line, 10);

    let tree = tmp.path().join("review-tree");
    vcs.add_detached_worktree(&repo, &tree, &head)
        .await
        .unwrap();
    assert!(tree.join("big.txt").is_file());
    assert!(!tree.join("main-only.txt").exists());
    // The user's checkout is untouched: still on main, clean.
    assert_eq!(git(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    vcs.remove_worktree(&repo, &tree).await.unwrap();
    assert!(!tree.exists());
    assert_eq!(vcs.worktrees(&repo).await.unwrap().len(), 1);

    let unrelated = tmp.path().join("other");
    std::fs::create_dir_all(&unrelated).unwrap();
    git(&unrelated, &["init", "-q", "-b", "x"]);
    write(&unrelated, "o.txt", "o\n");
    git(&unrelated, &["add", "-A"]);
    git(&unrelated, &["commit", "-qm", "o"]);
    git(
        &repo,
        &["fetch", "-q", unrelated.to_str().unwrap(), "x:unrelated"],
    );
    let none = vcs.merge_base(&repo, "main", "unrelated").await.unwrap();
    assert_eq!(none, None);
    assert!(vcs.merge_base(&repo, "--help", "main").await.is_err());
}
