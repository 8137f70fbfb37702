//! Which forge serves a repository URL, and which repository on it the URL names.

use serde::{Deserialize, Serialize};

use super::config::ForgeSettings;

/// A repository on a forge: its host and its path there (`OWNER/REPO` on GitHub; GitLab's
/// groups nest, `group/sub/project`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RepoRef {
    pub host: String,
    /// Without a leading slash or a trailing `.git`.
    pub path: String,
}

impl RepoRef {
    /// The repository a URL names: `https://HOST/OWNER/REPO(.git)`, `ssh://git@HOST(:PORT)/…`,
    /// `git://HOST/…` or git's scp-like `git@HOST:OWNER/REPO.git`. `None` for a path on this
    /// machine, a `file://` URL, or a URL with fewer than two path segments.
    pub fn parse(url: &str) -> Option<Self> {
        let (authority, path) = if let Some((scheme, rest)) = url.split_once("://") {
            if !matches!(scheme, "https" | "http" | "ssh" | "git") {
                return None;
            }
            rest.split_once('/')?
        } else {
            // scp-like: user@host:path, the part before ':' holding no '/'.
            let (authority, path) = url.split_once(':')?;
            if !authority.contains('@') || authority.contains('/') {
                return None;
            }
            (authority, path)
        };
        let host = authority.rsplit('@').next()?;
        let host = host.split(':').next()?.to_ascii_lowercase();
        let path = path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        let segment_ok = |s: &&str| {
            !s.is_empty()
                && *s != "."
                && *s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        if host.is_empty() || segments.len() < 2 || !segments.iter().all(segment_ok) {
            return None;
        }
        Some(Self {
            host,
            path: path.to_owned(),
        })
    }

    /// `OWNER` of `OWNER/REPO` (GitLab: the namespace, `group/sub`).
    pub fn owner(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(owner, _)| owner)
    }

    /// `REPO` of `OWNER/REPO`.
    pub fn name(&self) -> &str {
        self.path
            .rsplit_once('/')
            .map_or(&self.path, |(_, name)| name)
    }
}

/// The forge among `forges` whose host the URL's is, and the repository the URL names;
/// `None` when the URL is not a forge's (a path, `file://`, a host no forge serves).
/// github.com is served by [`super::default_github`] when no `[forges]` table names it.
pub fn serving_forge<'f>(
    forges: &'f [ForgeSettings],
    fallback_github: &'f ForgeSettings,
    url: &str,
) -> Option<(&'f ForgeSettings, RepoRef)> {
    let repo = RepoRef::parse(url)?;
    let forge = forges
        .iter()
        .find(|f| f.host == repo.host)
        .or_else(|| (repo.host == fallback_github.host).then_some(fallback_github))?;
    Some((forge, repo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forges::config::{ForgeKind, default_github};

    fn check(url: &str, want: Option<(&str, &str)>) {
        let got = RepoRef::parse(url);
        let got = got.as_ref().map(|r| (r.host.as_str(), r.path.as_str()));
        assert_eq!(got, want, "{url}");
    }

    #[test]
    fn repository_urls_and_look_alikes() {
        let gh = Some(("github.com", "octo/hello"));
        check("https://github.com/octo/hello.git", gh);
        check("https://github.com/octo/hello", gh);
        check("https://GitHub.com/octo/hello/", gh);
        check("ssh://git@github.com/octo/hello.git", gh);
        check("ssh://git@github.com:22/octo/hello.git", gh);
        check("git@github.com:octo/hello.git", gh);
        check("https://x-access@github.com/octo/hello.git", gh);
        check(
            "https://gitlab.example.com/group/sub/project.git",
            Some(("gitlab.example.com", "group/sub/project")),
        );
        check("http://127.0.0.1:8080/o/r.git", Some(("127.0.0.1", "o/r")));
        // Look-alikes that name no forge repository.
        check("/srv/repos/octo/hello", None);
        check("file:///srv/repos/octo/hello.git", None);
        check("https://github.com/octo", None);
        check("https://github.com/", None);
        check("https://github.com/octo/../etc", None);
        check("https://github.com/octo/hello world", None);
        check("dir/with@at:colon/x", None);
        check("notes:2026/x", None);
        check("ftp://github.com/octo/hello", None);
    }

    #[test]
    fn the_forge_that_serves_a_url() {
        let gh = default_github();
        let lab = ForgeSettings::new(
            "lab",
            ForgeKind::Gitlab,
            "gitlab.example.com",
            "https://gitlab.example.com/api/v4",
            "GITLAB_TOKEN",
            None,
        )
        .unwrap();
        let forges = vec![lab];
        let served = |url: &str| serving_forge(&forges, &gh, url).map(|(f, _)| f.name.clone());
        assert_eq!(
            served("https://github.com/o/r.git").as_deref(),
            Some("github")
        );
        assert_eq!(
            served("git@gitlab.example.com:g/s/p.git").as_deref(),
            Some("lab")
        );
        // A host that merely ends like a served one is not served.
        assert_eq!(served("https://evilgithub.com/o/r.git"), None);
        assert_eq!(served("https://gitlab.example.com.evil/o/r.git"), None);
        assert_eq!(served("/work/r"), None);
        let r = RepoRef::parse("https://gitlab.example.com/group/sub/project.git").unwrap();
        assert_eq!((r.owner(), r.name()), ("group/sub", "project"));
    }
}
