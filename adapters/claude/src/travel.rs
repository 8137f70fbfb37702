//! claude's sessions travelling with a task (issue 39). claude keeps a session's transcript
//! at `<config dir>/projects/<escaped cwd>/<session>.jsonl` (config dir `<home>/.claude`,
//! the escaped cwd the path with every character but ASCII letters and digits made `-`; a
//! path escaping to over 200 characters is cut there and given a hash forge does not
//! reproduce). `--resume <id>` finds the transcript under any project directory (verified
//! with 2.1.330), but the file is placed under the new work tree's own key all the same, its
//! `cwd` fields rewritten. Only the transcript travels: subagent transcripts and tool results
//! beside it are not needed to resume.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::session_archive::{SessionArchive, SessionFile, rewrite_workdir};
use forge_domain::{ForgeError, SessionId};
use forge_ports::FileStore;
use forge_ports::session_travel::{SessionTravel, checked, text_of};

/// The longest escaped path claude uses as it is.
const MAX_KEY: usize = 200;

/// The provider id archives are made for.
const PROVIDER: &str = "claude";

/// claude's [`SessionTravel`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeSessions;

/// The project directory name claude uses for `cwd` (see the module docs); a cut path
/// gets `-forge` in place of claude's own hash (resume finds it all the same).
pub fn project_key(cwd: &str) -> String {
    let escaped: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if escaped.len() <= MAX_KEY {
        escaped
    } else {
        format!("{}-forge", &escaped[..MAX_KEY])
    }
}

fn projects(home: &Path) -> std::path::PathBuf {
    crate::home::config_dir(home).join("projects")
}

#[async_trait]
impl SessionTravel for ClaudeSessions {
    async fn export_session(
        &self,
        files: &dyn FileStore,
        session: &SessionId,
        workdir: &Path,
        home: &Path,
    ) -> Result<SessionArchive, ForgeError> {
        let name = format!("{}.jsonl", session.as_str());
        let own = projects(home).join(project_key(&workdir.to_string_lossy()));
        // The work tree's own key first, then any project directory (claude's cut keys).
        let mut dirs = vec![own.clone()];
        dirs.extend(
            files
                .list(&projects(home))
                .await?
                .into_iter()
                .filter(|d| *d != own),
        );
        for dir in dirs {
            let path = dir.join(&name);
            if let Some(bytes) = files.read(&path).await? {
                let relative = path.strip_prefix(home).unwrap_or(&path);
                return Ok(SessionArchive {
                    provider: PROVIDER.to_owned(),
                    session_id: session.as_str().to_owned(),
                    workdir: workdir.to_string_lossy().into_owned(),
                    files: vec![SessionFile {
                        path: relative.to_string_lossy().into_owned(),
                        text: text_of(&path, bytes)?,
                    }],
                });
            }
        }
        Err(ForgeError::InvalidRequest {
            reason: format!(
                "claude session {session} has no transcript under {}",
                projects(home).display()
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
        let to = workdir.to_string_lossy();
        let dir = projects(home).join(project_key(&to));
        for file in &archive.files {
            let name = file.path.rsplit('/').next().unwrap_or(&file.path);
            let text = rewrite_workdir(&file.text, &archive.workdir, &to);
            files.write(&dir.join(name), text.as_bytes()).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use forge_adapter_fs::FsFiles;

    use super::*;

    /// The first lines of a transcript claude 2.1.330 wrote (`-p … hello` in `/tmp/trv/w.c1`).
    const TRANSCRIPT: &str = r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-28T05:42:01.859Z","sessionId":"3c132afc-43d9-4138-b51a-c7ebf6e01384","content":"hello"}
{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hello"},"uuid":"1bf953a4-8b1f-4984-8a68-4ed230d4a26d","cwd":"/tmp/trv/w.c1","sessionId":"3c132afc-43d9-4138-b51a-c7ebf6e01384"}
"#;
    const SESSION: &str = "3c132afc-43d9-4138-b51a-c7ebf6e01384";

    #[test]
    fn keys_escape_every_character_but_letters_and_digits() {
        let check = |cwd: &str, expected: &str| assert_eq!(project_key(cwd), expected);
        check("/tmp/trv/w.c1", "-tmp-trv-w-c1");
        check("/home/a b/x_y", "-home-a-b-x-y");
        let long = format!("/{}", "a".repeat(250));
        assert_eq!(project_key(&long), format!("-{}-forge", "a".repeat(199)));
    }

    #[tokio::test]
    async fn a_session_moves_to_another_home_and_work_tree() {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let b = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = FsFiles::new();
        let at = a
            .path()
            .join(".claude/projects/-tmp-trv-w-c1")
            .join(format!("{SESSION}.jsonl"));
        files
            .write(&at, TRANSCRIPT.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // Another session and another project's file are not taken.
        let other = a.path().join(".claude/projects/-tmp-trv-w-c1/other.jsonl");
        files
            .write(&other, b"{}")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let session = SessionId::new(SESSION).unwrap_or_else(|e| panic!("{e}"));
        let archive = ClaudeSessions
            .export_session(&files, &session, Path::new("/tmp/trv/w.c1"), a.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(archive.files.len(), 1);
        assert_eq!(
            archive.files[0].path,
            format!(".claude/projects/-tmp-trv-w-c1/{SESSION}.jsonl")
        );
        ClaudeSessions
            .import_session(&files, &archive, Path::new("/srv/b/wt.7"), b.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let moved = b
            .path()
            .join(".claude/projects/-srv-b-wt-7")
            .join(format!("{SESSION}.jsonl"));
        let text = String::from_utf8(files.read(&moved).await.ok().flatten().unwrap_or_default())
            .unwrap_or_default();
        assert!(text.contains(r#""cwd":"/srv/b/wt.7""#), "{text}");
        assert!(!text.contains("/tmp/trv/w.c1"), "{text}");
    }

    #[tokio::test]
    async fn a_missing_session_and_a_foreign_archive_are_refused() {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = FsFiles::new();
        let session = SessionId::new(SESSION).unwrap_or_else(|e| panic!("{e}"));
        let missing = ClaudeSessions
            .export_session(&files, &session, Path::new("/w"), a.path())
            .await;
        assert!(matches!(missing, Err(ForgeError::InvalidRequest { .. })));
        let foreign = SessionArchive {
            provider: "codex".into(),
            session_id: SESSION.into(),
            workdir: "/w".into(),
            files: vec![SessionFile {
                path: "x".into(),
                text: String::new(),
            }],
        };
        let refused = ClaudeSessions
            .import_session(&files, &foreign, Path::new("/w"), a.path())
            .await;
        assert!(matches!(refused, Err(ForgeError::InvalidRequest { .. })));
    }
}
