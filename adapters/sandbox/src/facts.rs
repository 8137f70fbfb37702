//! What the machine says about one run: the paths the domain's plan needs.

use std::path::{Path, PathBuf};

use forge_domain::sandbox::{FsFacts, bindable};

/// The store and queue database files forge keeps in a checkout's `.forgecode/`.
const FORGE_DB_FILES: &[&str] = &["forge.db", "forge.db-wal", "forge.db-shm"];

/// Who a run is and what it runs: its work tree, its program, another program the sandbox
/// starts (the egress bridge), and the paths its configuration names
/// ([`forge_domain::sandbox::Confinement::config_reads`]).
pub struct Run<'a> {
    pub work_tree: &'a Path,
    pub program: &'a Path,
    pub also_runs: Option<&'a Path>,
    pub config_reads: &'a [PathBuf],
}

/// The facts for `run`; `cli_home` is the `HOME` the invocation sets, if any.
pub fn gather(
    run: &Run<'_>,
    home: Option<PathBuf>,
    cli_home: Option<PathBuf>,
    forge_private: &[PathBuf],
) -> FsFacts {
    let work_tree = run.work_tree;
    let mut reads: Vec<PathBuf> = Vec::new();
    let mut add = |dir: &Path| {
        if !reads.iter().any(|r| r == dir) {
            reads.push(dir.to_path_buf());
        }
    };
    let real = std::fs::canonicalize(run.program).ok();
    for path in std::iter::once(run.program).chain(real.as_deref()) {
        if let Some(dir) = path.parent() {
            add(dir);
        }
        if let Some(root) = installation(path) {
            add(root);
        }
    }
    let exe = std::env::current_exe().ok();
    for other in exe.as_deref().into_iter().chain(run.also_runs) {
        if let Some(dir) = other.parent() {
            add(dir);
        }
    }
    // What the configuration names, as it is and where it really lies, when it exists (a
    // path that is the home or above it, `/` or `/tmp` never).
    let homes: Vec<&Path> = home
        .iter()
        .chain(cli_home.iter())
        .map(PathBuf::as_path)
        .collect();
    for named in run.config_reads {
        let Ok(real) = std::fs::canonicalize(named) else {
            continue;
        };
        for path in [named.as_path(), real.as_path()] {
            let whole = installation(path).unwrap_or(path);
            if bindable(whole, &homes) {
                add(whole);
            }
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

/// The whole `node_modules` a path lies in: a CLI installed by npm runs code of sibling
/// packages (codex's native binary lives in `@openai/codex-linux-*`, `.bin/claude` is a link
/// into `@anthropic-ai/claude-code`), so that is its installation, wherever it is (under the
/// shared /tmp too, private inside).
fn installation(path: &Path) -> Option<&Path> {
    path.ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
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
        let run = Run {
            work_tree: &tree,
            program: Path::new("/usr/bin/claude"),
            also_runs: Some(&bridge),
            config_reads: &[],
        };
        let facts = gather(&run, None, None, &[]);
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

    #[test]
    fn what_the_configuration_names_is_read_where_it_lies() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let package = root.join("clis/node_modules/@anthropic-ai/claude-code");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::create_dir_all(root.join("clis/node_modules/.bin")).unwrap();
        std::fs::write(package.join("cli.js"), "").unwrap();
        let claude = root.join("clis/node_modules/.bin/claude");
        std::os::unix::fs::symlink(package.join("cli.js"), &claude).unwrap();
        let settings = root.join("settings.json");
        std::fs::write(&settings, "{}").unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let named = [
            claude,
            settings.clone(),
            root.join("missing.json"),
            home.clone(),
            root.clone(),
        ];
        let run = Run {
            work_tree: &root.join("wt"),
            program: Path::new("/usr/bin/claude-agent-acp"),
            also_runs: None,
            config_reads: &named,
        };
        let facts = gather(&run, Some(home.clone()), None, &[]);
        // The installation the executable lies in, and the settings file itself.
        assert!(facts.reads.contains(&root.join("clis/node_modules")));
        assert!(facts.reads.contains(&settings));
        // Look-alikes: what does not exist, the home, a directory above it.
        assert!(!facts.reads.contains(&root.join("missing.json")));
        assert!(!facts.reads.contains(&home));
        assert!(!facts.reads.contains(&root));
    }
}
