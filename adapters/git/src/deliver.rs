//! Delivery through git: commit a task's work tree, push it, undo it.

use std::path::Path;
use std::time::Duration;

use forge_domain::ForgeError;
use forge_ports::CommitAuthor;

use crate::git_cli::{GitCli, failure_text};

/// A push talks to another machine; the local default (seconds) is too short for it.
const PUSH_TIMEOUT: Duration = Duration::from_secs(120);

/// `-c user.name=… -c user.email=…` before the subcommand: author and committer both.
fn identity(author: Option<&CommitAuthor>) -> Vec<String> {
    match author {
        Some(a) => vec![
            "-c".into(),
            format!("user.name={}", a.name),
            "-c".into(),
            format!("user.email={}", a.email),
        ],
        None => Vec::new(),
    }
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

pub(crate) async fn commit(
    git: &GitCli,
    dir: &Path,
    message: &str,
    author: Option<&CommitAuthor>,
    exclude: &[String],
) -> Result<Option<String>, ForgeError> {
    git.git_ok(dir, &["add", "-A", "--", "."], None).await?;
    // forge's own paths go back to HEAD's state (a path HEAD does not have leaves the
    // index). Done as a reset rather than `:(exclude)` pathspecs, which git refuses when
    // the path is also ignored. Unmatched paths are no error here.
    for path in exclude {
        let _ = git
            .git(dir, &["reset", "-q", "HEAD", "--", path], None)
            .await?;
    }
    let staged = git.git(dir, &["diff", "--cached", "--quiet"], None).await?;
    match staged.code {
        Some(0) => return Ok(None),
        Some(1) => {}
        _ => {
            return Err(ForgeError::io(
                format!("running git diff --cached in {}", dir.display()),
                failure_text(&staged),
            ));
        }
    }
    let mut args = identity(author);
    args.extend(["commit", "-q", "-m", message].map(String::from));
    git.git_ok(dir, &strs(&args), None).await?;
    let head = git.git_ok(dir, &["rev-parse", "HEAD"], None).await?;
    Ok(Some(head.trim().to_owned()))
}

pub(crate) async fn push(
    git: &GitCli,
    dir: &Path,
    remote: &str,
    branch: &str,
) -> Result<(), ForgeError> {
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    git.git_ok(
        dir,
        &["push", "--porcelain", remote, &refspec],
        Some(PUSH_TIMEOUT),
    )
    .await
    .map(|_| ())
}

pub(crate) async fn revert(
    git: &GitCli,
    dir: &Path,
    commit: &str,
    author: Option<&CommitAuthor>,
) -> Result<String, ForgeError> {
    let mut args = identity(author);
    args.extend(["revert", "--no-edit", commit].map(String::from));
    if let Err(err) = git.git_ok(dir, &strs(&args), None).await {
        // Leave the tree as it was: a half-done revert is worse than none.
        let _ = git.git(dir, &["revert", "--abort"], None).await;
        return Err(err);
    }
    let head = git.git_ok(dir, &["rev-parse", "HEAD"], None).await?;
    Ok(head.trim().to_owned())
}

pub(crate) async fn delete_branch(
    git: &GitCli,
    repo: &Path,
    branch: &str,
) -> Result<bool, ForgeError> {
    let reference = format!("refs/heads/{branch}");
    let exists = git
        .git(
            repo,
            &["rev-parse", "--verify", "--quiet", &reference],
            None,
        )
        .await?;
    if exists.code != Some(0) {
        return Ok(false);
    }
    git.git_ok(repo, &["branch", "-D", branch], None).await?;
    Ok(true)
}

/// `git var GIT_COMMITTER_IDENT` answers as a commit would: the identity, or a failure
/// ("unable to auto-detect email address") when git has none.
pub(crate) async fn git_identity(
    git: &GitCli,
    dir: &Path,
) -> Result<Option<CommitAuthor>, ForgeError> {
    let out = git.git(dir, &["var", "GIT_COMMITTER_IDENT"], None).await?;
    match out.code {
        Some(0) => Ok(parse_ident(&out.stdout)),
        // 128: git has no usable identity (the case forge falls back for).
        Some(128) => Ok(None),
        _ => Err(ForgeError::io(
            format!("running git var in {}", dir.display()),
            failure_text(&out),
        )),
    }
}

/// `Name <email> 1700000000 +0000` → name and email.
pub(crate) fn parse_ident(line: &str) -> Option<CommitAuthor> {
    let line = line.trim();
    let open = line.find('<')?;
    let close = open + line[open..].find('>')?;
    let name = line[..open].trim();
    let email = line[open + 1..close].trim();
    (!email.is_empty()).then(|| CommitAuthor {
        name: name.to_owned(),
        email: email.to_owned(),
    })
}

/// Record separator between commits in the log output below.
const RS: char = '\u{1e}';

pub(crate) async fn commits_with_trailer(
    git: &GitCli,
    repo: &Path,
    key: &str,
    value: &str,
) -> Result<Vec<String>, ForgeError> {
    let needle = format!("{key}: {value}");
    let out = log_grep(git, repo, &needle).await?;
    Ok(parse_trailer_log(&out, &needle))
}

pub(crate) async fn trailers(
    git: &GitCli,
    repo: &Path,
    key: &str,
) -> Result<Vec<(String, String)>, ForgeError> {
    let out = log_grep(git, repo, &format!("{key}: ")).await?;
    Ok(parse_trailer_values(&out, key))
}

/// The commits of every branch whose message holds `text`: each record is the hash, the
/// message, and a record separator (git's grep matches substrings; the parsers check lines).
async fn log_grep(git: &GitCli, repo: &Path, text: &str) -> Result<String, ForgeError> {
    let grep = format!("--grep={text}");
    let args = [
        "log",
        "--branches",
        "--fixed-strings",
        &grep,
        "--format=%H%n%B%x1e",
    ];
    git.git_ok(repo, &args, None).await
}

/// (commit, value) of each record's last `key: value` line.
pub(crate) fn parse_trailer_values(out: &str, key: &str) -> Vec<(String, String)> {
    let prefix = format!("{key}: ");
    out.split(RS)
        .filter_map(|record| {
            let mut lines = record.trim_start_matches('\n').lines();
            let sha = lines.next()?.trim().to_owned();
            let value = lines
                .filter_map(|line| line.trim_end().strip_prefix(&prefix))
                .map(str::trim)
                .rfind(|v| !v.is_empty())?
                .to_owned();
            (!sha.is_empty()).then_some((sha, value))
        })
        .collect()
}

/// `--grep` matches substrings (`t1` in `t10`); keep commits with the exact trailer line.
pub(crate) fn parse_trailer_log(out: &str, needle: &str) -> Vec<String> {
    out.split(RS)
        .filter_map(|record| {
            let mut lines = record.trim_start_matches('\n').lines();
            let sha = lines.next()?.trim().to_owned();
            let found = lines.any(|line| line.trim_end() == needle);
            (found && !sha.is_empty()).then_some(sha)
        })
        .collect()
}

pub(crate) async fn is_ancestor(
    git: &GitCli,
    repo: &Path,
    commit: &str,
    rev: &str,
) -> Result<bool, ForgeError> {
    let out = git
        .git(repo, &["merge-base", "--is-ancestor", commit, rev], None)
        .await?;
    match out.code {
        Some(0) => Ok(true),
        // 1: not an ancestor; 128: an unknown commit or rev, which is not merged either.
        Some(1) | Some(128) => Ok(false),
        _ => Err(ForgeError::io(
            format!("running git merge-base in {}", repo.display()),
            failure_text(&out),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_log_keeps_exact_trailer_lines_only() {
        let out = "aaa\nfix: x\n\nForge-Task: t1\n\u{1e}\nbbb\nfix: y\n\nForge-Task: t10\n\u{1e}\nccc\nsubject\n\nForge-Task: t1  \n\u{1e}\n";
        assert_eq!(parse_trailer_log(out, "Forge-Task: t1"), vec!["aaa", "ccc"]);
        assert!(parse_trailer_log("", "Forge-Task: t1").is_empty());
    }

    #[test]
    fn trailer_values_are_read_per_commit() {
        let out = "aaa\nfix: x\n\nForge-Task: t1\n\u{1e}\nbbb\nno trailer\n\u{1e}\nccc\ns\n\nForge-Task: old\nForge-Task: t2 \n\u{1e}\n";
        assert_eq!(
            parse_trailer_values(out, "Forge-Task"),
            vec![("aaa".into(), "t1".into()), ("ccc".into(), "t2".into())]
        );
    }

    #[test]
    fn git_identities_are_read_from_git_var() {
        let check = |line: &str, expected: Option<(&str, &str)>| {
            let got = parse_ident(line).map(|a| (a.name, a.email));
            let expected = expected.map(|(n, e)| (n.to_owned(), e.to_owned()));
            assert_eq!(got, expected, "{line:?}");
        };
        check(
            "Ada Lovelace <ada@example.invalid> 1795649034 +0000\n",
            Some(("Ada Lovelace", "ada@example.invalid")),
        );
        check("<bot@x.invalid> 1 +0100", Some(("", "bot@x.invalid")));
        // Look-alikes: no email, or no brackets at all.
        check("Ada <> 1 +0000", None);
        check("Ada ada@example.invalid 1 +0000", None);
        check("", None);
    }

    #[test]
    fn identity_goes_before_the_subcommand() {
        let author = CommitAuthor {
            name: "Forge Bot".into(),
            email: "forge@example.invalid".into(),
        };
        assert_eq!(
            identity(Some(&author)),
            vec![
                "-c",
                "user.name=Forge Bot",
                "-c",
                "user.email=forge@example.invalid"
            ]
        );
        assert!(identity(None).is_empty());
    }
}
