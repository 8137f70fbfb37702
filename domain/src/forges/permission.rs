//! Who may steer the agent from a forge: a user with write permission on the repository
//! (GitHub: `write`, `maintain`, `admin`; GitLab: access level 30, Developer, or above).
//! A reader's comment, approval or label changes nothing.

use serde::{Deserialize, Serialize};

/// GitLab's Developer access level; Reporter (20), Guest (10) and below do not steer.
pub const GITLAB_DEVELOPER: u32 = 30;

/// A user's permission on a repository, as the forge's API reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// GitHub's `permission` of `GET /repos/{owner}/{repo}/collaborators/{username}/permission`:
    /// `admin`, `maintain`, `write`, `triage`, `read` or `none`.
    Github(GithubRole),
    /// GitLab's `access_level` of `GET /projects/:id/members/all/:user_id`.
    GitlabAccess(u32),
    /// The user is not a member at all (a 404 from the API).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GithubRole {
    Admin,
    Maintain,
    Write,
    Triage,
    Read,
    None,
}

impl GithubRole {
    /// GitHub's word; anything unknown is the least permission (a newer API's role is not
    /// trusted until forge knows what it allows).
    pub fn parse(text: &str) -> Self {
        match text {
            "admin" => GithubRole::Admin,
            "maintain" => GithubRole::Maintain,
            "write" => GithubRole::Write,
            "triage" => GithubRole::Triage,
            "read" => GithubRole::Read,
            _ => GithubRole::None,
        }
    }
}

/// Whether a user with `permission` may steer forge (ask for a change, approve a held one,
/// queue a task from an issue).
pub fn may_steer(permission: Permission) -> bool {
    match permission {
        Permission::Github(role) => matches!(
            role,
            GithubRole::Admin | GithubRole::Maintain | GithubRole::Write
        ),
        Permission::GitlabAccess(level) => level >= GITLAB_DEVELOPER,
        Permission::None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(permission: Permission, want: bool) {
        assert_eq!(may_steer(permission), want, "{permission:?}");
    }

    #[test]
    fn writers_steer_and_readers_do_not() {
        for (word, want) in [
            ("admin", true),
            ("maintain", true),
            ("write", true),
            ("triage", false),
            ("read", false),
            ("none", false),
            ("Write", false),
            ("owner", false),
            ("", false),
        ] {
            check(Permission::Github(GithubRole::parse(word)), want);
        }
        for (level, want) in [
            (50, true),
            (40, true),
            (30, true),
            (29, false),
            (20, false),
            (10, false),
            (5, false),
            (0, false),
        ] {
            check(Permission::GitlabAccess(level), want);
        }
        check(Permission::None, false);
    }
}
