//! Reading one file of a commit with the real git, in a bare mirror as forge's cache of a
//! URL is: the commit's version, not the checkout's; a missing file is `None`.

use std::sync::Arc;

use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_domain::ForgeError;
use forge_ports::Vcs;

use super::git;

#[tokio::test]
async fn a_file_of_a_commit_in_a_bare_mirror() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("forge.toml"), "[task]\nrisk_threshold = 0\n").unwrap();
    std::fs::write(repo.join("sub/forge.toml"), "nested\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "first"]);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("forge.toml"), "[task]\nrisk_threshold = 5\n").unwrap();
    git(&repo, &["commit", "-qam", "second"]);
    let mirror = tmp.path().join("mirror.git");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--mirror",
            repo.to_str().unwrap(),
            "mirror.git",
        ],
    );

    let vcs = GitCli::new(Arc::new(TokioProcessRunner::new()));
    let at = |commit: String, path: &'static str| {
        let vcs = vcs.clone();
        let mirror = mirror.clone();
        async move { vcs.file_at(&mirror, &commit, path).await }
    };
    assert_eq!(
        at(first.clone(), "forge.toml").await.unwrap().as_deref(),
        Some("[task]\nrisk_threshold = 0\n")
    );
    assert_eq!(
        at("HEAD".into(), "forge.toml").await.unwrap().as_deref(),
        Some("[task]\nrisk_threshold = 5\n")
    );
    assert_eq!(
        at(first.clone(), "sub/forge.toml")
            .await
            .unwrap()
            .as_deref(),
        Some("nested\n")
    );
    // Absent: a name the commit lacks, a directory's name is not a file's look-alike.
    assert_eq!(at(first.clone(), "missing.toml").await.unwrap(), None);
    assert_eq!(at(first.clone(), "su").await.unwrap(), None);
    // Refused before git runs: options and paths out of the repository.
    for (commit, path) in [
        ("--help", "forge.toml"),
        ("HEAD", "../x"),
        ("HEAD", "/etc/passwd"),
    ] {
        let got = vcs.file_at(&mirror, commit, path).await;
        assert!(
            matches!(got, Err(ForgeError::InvalidRequest { .. })),
            "{commit}:{path}: {got:?}"
        );
    }
    // No such commit: git's own words.
    assert!(matches!(
        at("0".repeat(40), "forge.toml").await,
        Err(ForgeError::Io { .. })
    ));
}
