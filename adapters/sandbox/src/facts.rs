//! What the machine says about one run: the paths the domain's plan needs.

use std::path::{Path, PathBuf};

use forge_domain::sandbox::FsFacts;

/// The store and queue database files forge keeps in a checkout's `.forgecode/`.
const FORGE_DB_FILES: &[&str] = &["forge.db", "forge.db-wal", "forge.db-shm"];

/// The facts for a run of `program` in `work_tree`; `also_runs` is another program the
/// sandbox starts (the egress bridge); `cli_home` is the `HOME` the invocation sets, if any.
pub fn gather(
    work_tree: &Path,
    program: &Path,
    also_runs: Option<&Path>,
    home: Option<PathBuf>,
    cli_home: Option<PathBuf>,
    forge_private: &[PathBuf],
) -> FsFacts {
    let mut reads: Vec<PathBuf> = Vec::new();
    let mut add = |dir: &Path| {
        if !reads.iter().any(|r| r == dir) {
            reads.push(dir.to_path_buf());
        }
    };
    let real = std::fs::canonicalize(program).ok();
    for path in std::iter::once(program).chain(real.as_deref()) {
        if let Some(dir) = path.parent() {
            add(dir);
        }
        // A CLI installed by npm runs code of sibling packages (codex's native binary lives
        // in `@openai/codex-linux-*`): the whole `node_modules` it lies in is its
        // installation, wherever that is (under the shared /tmp too, private inside).
        let root = path
            .ancestors()
            .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
            .last();
        if let Some(root) = root {
            add(root);
        }
    }
    let exe = std::env::current_exe().ok();
    for other in exe.as_deref().into_iter().chain(also_runs) {
        if let Some(dir) = other.parent() {
            add(dir);
        }
    }
    let git = git_metadata(work_tree);
    reads.extend(git.iter().cloned());
    let mut private: Vec<PathBuf> = forge_private.to_vec();
    let mut checkouts = vec![work_tree.to_path_buf()];
    // A linked work tree's checkout is its common directory's parent.
    if let Some(main) = git.last().and_then(|common| common.parent()) {
        checkouts.push(main.to_path_buf());
    }
    for checkout in checkouts {
        for file in FORGE_DB_FILES {
            private.push(checkout.join(".forgecode").join(file));
        }
    }
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let cli_home = cli_home.filter(|h| home.as_deref().map(real) != Some(real(h)));
    FsFacts {
        home,
        cli_home,
        reads,
        forge_private: private,
    }
}

/// A linked work tree's `gitdir:` and its common directory (last), when `.git` is a file.
fn git_metadata(work_tree: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(work_tree.join(".git")) else {
        return Vec::new();
    };
    let Some(dir) = text.trim().strip_prefix("gitdir:") else {
        return Vec::new();
    };
    let gitdir = work_tree.join(dir.trim());
    let mut out = vec![gitdir.clone()];
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
        let common = gitdir.join(common.trim());
        out.push(std::fs::canonicalize(&common).unwrap_or(common));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_work_tree_reads_its_git_metadata_and_hides_the_checkouts_store() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let common = root.join("repo/.git");
        let gitdir = common.join("worktrees/t1");
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        let tree = root.join("wt");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        let bridge = root.join("target/debug/forge-code-agent");
        let facts = gather(
            &tree,
            Path::new("/usr/bin/claude"),
            Some(&bridge),
            None,
            None,
            &[],
        );
        assert!(facts.reads.contains(&gitdir));
        assert!(facts.reads.contains(&common));
        assert!(facts.reads.contains(&PathBuf::from("/usr/bin")));
        assert!(facts.reads.contains(&root.join("target/debug")));
        assert!(
            facts
                .forge_private
                .contains(&root.join("repo/.forgecode/forge.db"))
        );
        assert!(
            facts
                .forge_private
                .contains(&tree.join(".forgecode/forge.db"))
        );
    }
}
