//! Protected paths the work tree does not have yet. bubblewrap can only bind over what
//! exists, and binding a placeholder would leave files in the user's tree; so a protected
//! path missing when the run starts is looked at when it ends: if the run created it (an
//! `.envrc`, a `.vscode/tasks.json`, a `.husky/` hook), it is removed before anything else
//! reads the tree — the next review, commit or shell — and the refusal is reported like a
//! refused connection.
//!
//! Which paths: [`watched_for_creation`] (all protected ones but `.git` and `.forgecode`).

use std::path::PathBuf;

use forge_domain::sandbox::protected::watched_for_creation;
use forge_domain::sandbox::{Confinement, SandboxDenial, WorkTreeAccess};

/// The protected paths of a writable work tree that did not exist when its run started.
#[derive(Debug, Default)]
pub(crate) struct MissingProtected {
    paths: Vec<PathBuf>,
}

impl MissingProtected {
    /// Looks before the run starts.
    pub(crate) fn before(confinement: &Confinement) -> Self {
        if confinement.access != WorkTreeAccess::ReadWrite {
            return Self::default();
        }
        let paths = watched_for_creation(&confinement.work_tree)
            .into_iter()
            .filter(|path| std::fs::symlink_metadata(path).is_err())
            .collect();
        Self { paths }
    }

    /// After the run: what it created of them, removed, as refusals.
    pub(crate) fn created(self) -> Vec<SandboxDenial> {
        self.paths
            .into_iter()
            .filter_map(|path| {
                let meta = std::fs::symlink_metadata(&path).ok()?;
                // A symlink is removed, never followed.
                let removed = if meta.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                let reason = match removed {
                    Ok(()) => "a protected path may not be created: removed".to_owned(),
                    Err(err) => {
                        format!("a protected path may not be created; removing it failed: {err}")
                    }
                };
                Some(SandboxDenial::fs(path.display().to_string(), reason))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::event::DenialKind;
    use std::path::Path;

    #[test]
    fn what_the_run_created_is_removed_and_reported_what_was_there_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        std::fs::create_dir_all(tree.join(".vscode")).unwrap();
        std::fs::write(tree.join(".vscode/settings.json"), "{}").unwrap();
        let watch = MissingProtected::before(&Confinement::work_tree(tree));
        // The run: a new hook directory, a new start file, a symlink, an edit where it
        // may (a file that was there is the mounts' business), and look-alikes.
        std::fs::create_dir_all(tree.join(".husky")).unwrap();
        std::fs::write(tree.join(".husky/pre-commit"), "curl evil").unwrap();
        std::fs::write(tree.join(".envrc"), "curl evil").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tree.join(".mcp.json")).unwrap();
        std::fs::create_dir_all(tree.join(".claude/commands")).unwrap();
        std::fs::write(tree.join(".claude/notes.md"), "fine").unwrap();
        std::fs::write(tree.join(".envrc.example"), "fine").unwrap();
        std::fs::create_dir_all(tree.join(".git")).unwrap();
        std::fs::create_dir_all(tree.join(".forgecode/runs")).unwrap();

        let mut targets: Vec<String> = watch
            .created()
            .into_iter()
            .map(|d| {
                assert_eq!(d.kind, DenialKind::Fs);
                assert!(d.reason.unwrap().ends_with("removed"));
                d.target
                    .strip_prefix(&tree.display().to_string())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        targets.sort();
        assert_eq!(
            targets,
            ["/.claude/commands", "/.envrc", "/.husky", "/.mcp.json"]
        );
        for gone in [".husky", ".envrc", ".mcp.json", ".claude/commands"] {
            assert!(
                std::fs::symlink_metadata(tree.join(gone)).is_err(),
                "{gone}"
            );
        }
        for kept in [
            ".vscode/settings.json",
            ".claude/notes.md",
            ".envrc.example",
            ".git",
            ".forgecode/runs",
        ] {
            assert!(tree.join(kept).exists(), "{kept}");
        }
        assert!(Path::new("/etc/passwd").exists());
    }

    #[test]
    fn a_read_only_tree_is_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        let mut confinement = Confinement::work_tree(dir.path());
        confinement.access = WorkTreeAccess::ReadOnly;
        assert!(MissingProtected::before(&confinement).paths.is_empty());
    }
}
