//! gemini's sessions travelling with a task (issue 39). gemini 0.61 keeps a project's state
//! under `<home>/.gemini/tmp/<slug>/`: the slug is the project registry's name for the work
//! tree (`.gemini/projects.json`, `{"projects": {"<path>": "<slug>"}}`, confirmed by the
//! marker `tmp/<slug>/.project_root` holding the path, and the same in `history/<slug>/`);
//! a session is `chats/session-<date>-<first 8 of its id>.jsonl`, whose first line records the
//! `projectHash` (SHA-256 of the path). `--resume <id>` looks in the work tree's own project
//! directory only, so the import registers the new path under a slug of its own, writes both
//! markers and rewrites hash and path in the chat (verified with 0.61.0). Settings and auth
//! files never travel.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::session_archive::{SessionArchive, SessionFile, rewrite_workdir};
use forge_domain::{ForgeError, SessionId};
use forge_ports::FileStore;
use forge_ports::session_travel::{SessionTravel, checked, text_of};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PROVIDER: &str = "gemini";
const MARKER: &str = ".project_root";

/// gemini's [`SessionTravel`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GeminiSessions;

/// gemini's `projectHash` of a work tree: SHA-256 of its path, in hex.
pub fn project_hash(path: &str) -> String {
    Sha256::digest(path.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn gemini_dir(home: &Path) -> PathBuf {
    home.join(".gemini")
}

/// The name of `path`'s last component.
fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The project directories under `tmp/`, the one whose marker names `workdir` first.
async fn project_dirs(
    files: &dyn FileStore,
    home: &Path,
    workdir: &str,
) -> Result<Vec<PathBuf>, ForgeError> {
    let mut own = Vec::new();
    let mut others = Vec::new();
    for dir in files.list(&gemini_dir(home).join("tmp")).await? {
        match files.read(&dir.join(MARKER)).await {
            Ok(Some(owner)) if String::from_utf8_lossy(&owner).trim() == workdir => own.push(dir),
            Ok(Some(_)) => others.push(dir),
            // No marker (gemini's `bin` directory, a file): not a project.
            Ok(None) | Err(_) => {}
        }
    }
    own.extend(others);
    Ok(own)
}

/// The chat files of `session` in a project directory: named by its id's first 8
/// characters, and whose first line names the whole id.
async fn chats(
    files: &dyn FileStore,
    project: &Path,
    session: &str,
) -> Result<Vec<(PathBuf, String)>, ForgeError> {
    let short: String = session.chars().take(8).collect();
    let mut found = Vec::new();
    for path in files.list(&project.join("chats")).await? {
        let name = name_of(&path);
        if !(name.starts_with("session-") && name.contains(&short)) {
            continue;
        }
        let Some(bytes) = files.read(&path).await? else {
            continue;
        };
        let text = text_of(&path, bytes)?;
        let first: Value =
            serde_json::from_str(text.lines().next().unwrap_or_default()).unwrap_or_default();
        if first.get("sessionId").and_then(Value::as_str) == Some(session) {
            found.push((path, text));
        }
    }
    Ok(found)
}

/// A slug of `home`'s registry free for `workdir`: `wanted`, else `wanted-1`, `wanted-2`…
/// (a slug whose marker names another path belongs to that project).
async fn free_slug(
    files: &dyn FileStore,
    home: &Path,
    wanted: &str,
    workdir: &str,
) -> Result<String, ForgeError> {
    let tmp = gemini_dir(home).join("tmp");
    for n in 0..1000 {
        let slug = if n == 0 {
            wanted.to_owned()
        } else {
            format!("{wanted}-{n}")
        };
        match files.read(&tmp.join(&slug).join(MARKER)).await? {
            Some(owner) if String::from_utf8_lossy(&owner).trim() != workdir => {}
            _ => return Ok(slug),
        }
    }
    Err(ForgeError::InvalidRequest {
        reason: format!(
            "no free gemini project name like {wanted:?} in {}",
            tmp.display()
        ),
    })
}

/// Registers `workdir` as `slug` in `home`'s `projects.json`, keeping the other projects.
async fn register(
    files: &dyn FileStore,
    home: &Path,
    workdir: &str,
    slug: &str,
) -> Result<(), ForgeError> {
    let path = gemini_dir(home).join("projects.json");
    let mut registry: Value = match files.read(&path).await? {
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| ForgeError::InvalidRequest {
            reason: format!("{} cannot be read: {e}", path.display()),
        })?,
        None => json!({"projects": {}}),
    };
    if !registry.get("projects").is_some_and(Value::is_object) {
        registry["projects"] = json!({});
    }
    registry["projects"][workdir] = json!(slug);
    let text = serde_json::to_string_pretty(&registry).unwrap_or_default();
    files.write(&path, text.as_bytes()).await
}

#[async_trait]
impl SessionTravel for GeminiSessions {
    async fn export_session(
        &self,
        files: &dyn FileStore,
        session: &SessionId,
        workdir: &Path,
        home: &Path,
    ) -> Result<SessionArchive, ForgeError> {
        let workdir = workdir.to_string_lossy().into_owned();
        for project in project_dirs(files, home, &workdir).await? {
            let found = chats(files, &project, session.as_str()).await?;
            if found.is_empty() {
                continue;
            }
            let files = found
                .into_iter()
                .map(|(path, text)| SessionFile {
                    path: path
                        .strip_prefix(home)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned(),
                    text,
                })
                .collect();
            return Ok(SessionArchive {
                provider: PROVIDER.to_owned(),
                session_id: session.as_str().to_owned(),
                workdir,
                files,
            });
        }
        Err(ForgeError::InvalidRequest {
            reason: format!(
                "gemini session {session} has no chat under {}",
                gemini_dir(home).join("tmp").display()
            ),
        })
    }

    async fn import_session(
        &self,
        files: &dyn FileStore,
        archive: &SessionArchive,
        workdir: &Path,
        home: &Path,
    ) -> Result<(), ForgeError> {
        checked(archive, PROVIDER)?;
        let to = workdir.to_string_lossy().into_owned();
        // The archive's slug (`.gemini/tmp/<slug>/chats/…`), or the work tree's name.
        let wanted = archive
            .files
            .first()
            .and_then(|f| f.path.split('/').nth(2))
            .map_or_else(|| name_of(workdir), str::to_owned);
        let slug = free_slug(files, home, &wanted, &to).await?;
        let dir = gemini_dir(home);
        for marker in [dir.join("tmp").join(&slug), dir.join("history").join(&slug)] {
            files.write(&marker.join(MARKER), to.as_bytes()).await?;
        }
        let (old_hash, new_hash) = (project_hash(&archive.workdir), project_hash(&to));
        let chats = dir.join("tmp").join(&slug).join("chats");
        for file in &archive.files {
            let name = file.path.rsplit('/').next().unwrap_or(&file.path);
            let text =
                rewrite_workdir(&file.text, &archive.workdir, &to).replace(&old_hash, &new_hash);
            files.write(&chats.join(name), text.as_bytes()).await?;
        }
        register(files, home, &to, &slug).await
    }
}

#[cfg(test)]
mod tests {
    use forge_adapter_fs::FsFiles;

    use super::*;

    const SESSION: &str = "db25772c-e449-4f0e-b1ea-683a107b7aee";
    const CHAT: &str = "session-2026-11-28T05-42-db25772c.jsonl";

    /// The first lines of a chat gemini 0.61.0 wrote (`-p hello` in `/tmp/trv/wg1`), cut.
    fn chat() -> String {
        format!(
            "{{\"sessionId\":\"{SESSION}\",\"projectHash\":\"{}\",\"startTime\":\"2026-11-28T05:42:22.932Z\",\"kind\":\"main\"}}\n\
             {{\"$set\":{{\"messages\":[{{\"type\":\"user\",\"content\":[{{\"text\":\"- **Workspace Directories:**\\n  - /tmp/trv/wg1\\n\"}}]}}]}}}}\n",
            project_hash("/tmp/trv/wg1")
        )
    }

    #[test]
    fn the_project_hash_is_gemini_s() {
        // `echo -n /tmp/trv/wg1 | sha256sum`, the hash gemini wrote in that chat.
        assert_eq!(
            project_hash("/tmp/trv/wg1"),
            "dfaa476d7d4a0f78352c6bc28b3ae788118d985132afd762d405d097d9bfbb72"
        );
    }

    #[tokio::test]
    async fn a_session_moves_under_a_project_of_its_own() {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let b = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = FsFiles::new();
        let put = |path: PathBuf, text: String| async move {
            FsFiles::new()
                .write(&path, text.as_bytes())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        };
        let tmp = a.path().join(".gemini/tmp");
        put(tmp.join("wg1/.project_root"), "/tmp/trv/wg1".into()).await;
        put(tmp.join("wg1/chats").join(CHAT), chat()).await;
        // Another session of the project, and settings, stay behind.
        put(
            tmp.join("wg1/chats/session-2026-11-28T05-50-aaaaaaaa.jsonl"),
            "{}".into(),
        )
        .await;
        put(a.path().join(".gemini/settings.json"), "{}".into()).await;
        // On the other machine, `wg1` is taken by another project.
        put(
            b.path().join(".gemini/tmp/wg1/.project_root"),
            "/elsewhere".into(),
        )
        .await;
        put(
            b.path().join(".gemini/projects.json"),
            r#"{"projects":{"/elsewhere":"wg1"}}"#.into(),
        )
        .await;

        let session = SessionId::new(SESSION).unwrap_or_else(|e| panic!("{e}"));
        let archive = GeminiSessions
            .export_session(&files, &session, Path::new("/tmp/trv/wg1"), a.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let paths: Vec<&str> = archive.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [format!(".gemini/tmp/wg1/chats/{CHAT}")]);

        GeminiSessions
            .import_session(&files, &archive, Path::new("/srv/b/wt"), b.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let read = |p: PathBuf| async move {
            String::from_utf8(
                FsFiles::new()
                    .read(&p)
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or_default(),
            )
            .unwrap_or_default()
        };
        let g = b.path().join(".gemini");
        assert_eq!(read(g.join("tmp/wg1-1/.project_root")).await, "/srv/b/wt");
        assert_eq!(
            read(g.join("history/wg1-1/.project_root")).await,
            "/srv/b/wt"
        );
        let moved = read(g.join("tmp/wg1-1/chats").join(CHAT)).await;
        assert!(moved.contains(&project_hash("/srv/b/wt")), "{moved}");
        assert!(moved.contains("  - /srv/b/wt\\n"), "{moved}");
        let registry: Value =
            serde_json::from_str(&read(g.join("projects.json")).await).unwrap_or_default();
        assert_eq!(
            registry,
            json!({"projects": {"/elsewhere": "wg1", "/srv/b/wt": "wg1-1"}})
        );
        assert_eq!(read(g.join("settings.json")).await, "");
    }
}
