//! A user's permission on a project: their access level among its members, inherited
//! ones included (`GET /projects/:id/members/all/:user_id`). The API is by user id, a hook
//! names a username: `GET /users?username=` finds the id first.

use forge_domain::ForgeError;
use forge_domain::forges::{Permission, RepoRef};
use gitlab::api::projects::members::AllProjectMember;
use gitlab::api::users::Users;
use serde_json::Value;

use crate::error;
use crate::forge::{GitlabForge, built, project};

/// GitLab's usernames: letters, digits, `_`, `-` and `.`.
fn is_username(user: &str) -> bool {
    !user.is_empty()
        && user.len() <= 255
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

pub(crate) async fn access(
    forge: &GitlabForge,
    repo: &RepoRef,
    user: &str,
) -> Result<Permission, ForgeError> {
    if !is_username(user) {
        // Not a GitLab username: nobody with that name can be a member.
        return Ok(Permission::None);
    }
    let endpoint = Users::builder().username(user).build().map_err(built)?;
    let found = forge
        .query(&format!("finding user {user}"), endpoint)
        .await?;
    // `username` matches case-insensitively; the user is the one whose name it is.
    let Some(id) = found.as_array().and_then(|users| {
        users
            .iter()
            .find(|u| {
                u.get("username")
                    .and_then(Value::as_str)
                    .is_some_and(|name| name.eq_ignore_ascii_case(user))
            })
            .and_then(|u| u.get("id").and_then(Value::as_u64))
    }) else {
        return Ok(Permission::None);
    };
    let endpoint = AllProjectMember::builder()
        .project(project(repo))
        .user(id)
        .build()
        .map_err(built)?;
    let member: Result<Value, _> =
        gitlab::api::AsyncQuery::query_async(&endpoint, &forge.client).await;
    match member {
        Ok(member) => Ok(level(&member)),
        // Not a member, nor of a group above the project.
        Err(e) if error::status(&e) == Some(404) => Ok(Permission::None),
        // The port's answer to "may not say" is an I/O error, whatever the status.
        Err(e) => Err(
            match forge.error(&format!("reading {user}'s access to {}", repo.path), &e) {
                ForgeError::InvalidRequest { reason } => ForgeError::Io {
                    context: "gitlab: reading a member's access level".to_owned(),
                    message: reason,
                },
                other => other,
            },
        ),
    }
}

/// A member's `access_level`; a blocked or awaiting member (`state` not `active`) steers
/// nothing.
fn level(member: &Value) -> Permission {
    let active = member
        .get("state")
        .and_then(Value::as_str)
        .is_none_or(|s| s == "active");
    match member.get("access_level").and_then(Value::as_u64) {
        Some(level) if active => Permission::GitlabAccess(u32::try_from(level).unwrap_or(0)),
        _ => Permission::None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn levels_and_usernames() {
        let check = |member: Value, want: Permission| assert_eq!(level(&member), want, "{member}");
        check(
            json!({"access_level": 30, "state": "active"}),
            Permission::GitlabAccess(30),
        );
        check(json!({"access_level": 50}), Permission::GitlabAccess(50));
        check(
            json!({"access_level": 40, "state": "blocked"}),
            Permission::None,
        );
        check(json!({"state": "active"}), Permission::None);
        for (name, ok) in [
            ("jane.doe-1_x", true),
            ("", false),
            ("a b", false),
            ("../x", false),
            ("jane%2F", false),
        ] {
            assert_eq!(is_username(name), ok, "{name:?}");
        }
    }
}
