//! Codex's sessions travelling with a task (issue 39). Codex keeps a thread's rollout at
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<thread id>.jsonl` (`CODEX_HOME` is
//! `<home>/.codex` for a run with a home of its own); its first line, `session_meta`, records
//! the `cwd`. `exec resume <id>` in a fresh `CODEX_HOME` holding only the rollout continues
//! the thread (verified with 0.169.0: its state databases are rebuilt, not needed). The
//! rollout travels at the same relative path, the work tree's path rewritten; auth and
//! config files never do.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::session_archive::{SessionArchive, SessionFile, rewrite_workdir};
use forge_domain::{ForgeError, SessionId};
use forge_ports::FileStore;
use forge_ports::session_travel::{SessionTravel, checked, text_of};

use crate::home::codex_home_in;

const PROVIDER: &str = "codex";

/// Codex's [`SessionTravel`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexSessions;

/// The date directories (`YYYY`, `MM`, `DD`: digits only) directly in `dir`.
async fn date_dirs(files: &dyn FileStore, dir: &Path) -> Result<Vec<PathBuf>, ForgeError> {
    Ok(files
        .list(dir)
        .await?
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect())
}

/// The rollouts of `thread` under `sessions`, oldest date first.
async fn rollouts(
    files: &dyn FileStore,
    sessions: &Path,
    thread: &str,
) -> Result<Vec<PathBuf>, ForgeError> {
    let suffix = format!("-{thread}.jsonl");
    let mut found = Vec::new();
    for year in date_dirs(files, sessions).await? {
        for month in date_dirs(files, &year).await? {
            for day in date_dirs(files, &month).await? {
                found.extend(files.list(&day).await?.into_iter().filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
                }));
            }
        }
    }
    Ok(found)
}

#[async_trait]
impl SessionTravel for CodexSessions {
    async fn export_session(
        &self,
        files: &dyn FileStore,
        session: &SessionId,
        workdir: &Path,
        home: &Path,
    ) -> Result<SessionArchive, ForgeError> {
        let codex_home = codex_home_in(home);
        let mut archive = SessionArchive {
            provider: PROVIDER.to_owned(),
            session_id: session.as_str().to_owned(),
            workdir: workdir.to_string_lossy().into_owned(),
            files: Vec::new(),
        };
        for path in rollouts(files, &codex_home.join("sessions"), session.as_str()).await? {
            let Some(bytes) = files.read(&path).await? else {
                continue;
            };
            let relative = path.strip_prefix(home).unwrap_or(&path);
            archive.files.push(SessionFile {
                path: relative.to_string_lossy().into_owned(),
                text: text_of(&path, bytes)?,
            });
        }
        if archive.files.is_empty() {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "codex thread {session} has no rollout under {}",
                    codex_home.join("sessions").display()
                ),
            });
        }
        Ok(archive)
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
        for file in &archive.files {
            let text = rewrite_workdir(&file.text, &archive.workdir, &to);
            files.write(&home.join(&file.path), text.as_bytes()).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use forge_adapter_fs::FsFiles;

    use super::*;

    const THREAD: &str = "01a220ab-6fac-7652-80f0-9fef2c0d98ce";
    /// The `session_meta` line codex 0.169.0 wrote (`exec --json … hello` in `/tmp/trv/w1`),
    /// its instructions cut.
    const META: &str = r#"{"timestamp":"2026-11-28T05:40:35.912Z","ordinal":0,"type":"session_meta","payload":{"account_scoped":true,"session_id":"01a220ab-6fac-7652-80f0-9fef2c0d98ce","id":"01a220ab-6fac-7652-80f0-9fef2c0d98ce","timestamp":"2026-11-28T05:40:35.890Z","cwd":"/tmp/trv/w1","runtime_workspace_roots":["/tmp/trv/w1"],"originator":"codex_exec","cli_version":"0.169.0","source":"exec"}}"#;

    #[tokio::test]
    async fn a_thread_moves_with_its_rollout_only() {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let b = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = FsFiles::new();
        let day = a.path().join(".codex/sessions/2026/11/28");
        let name = format!("rollout-2026-11-28T05-40-35-{THREAD}.jsonl");
        let write = |path: PathBuf, text: &'static str| async move {
            files
                .write(&path, text.as_bytes())
                .await
                .unwrap_or_else(|e| panic!("{e}"))
        };
        write(day.join(&name), META).await;
        // Another thread, the auth file and a state database stay behind.
        write(day.join("rollout-2026-11-28T05-41-00-other.jsonl"), "{}").await;
        write(a.path().join(".codex/auth.json"), "{\"key\":\"secret\"}").await;
        write(a.path().join(".codex/state_5.sqlite"), "db").await;
        let thread = SessionId::new(THREAD).unwrap_or_else(|e| panic!("{e}"));
        let archive = CodexSessions
            .export_session(&files, &thread, Path::new("/tmp/trv/w1"), a.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let paths: Vec<&str> = archive.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [format!(".codex/sessions/2026/11/28/{name}")]);
        CodexSessions
            .import_session(&files, &archive, Path::new("/srv/b/wt"), b.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let moved = b.path().join(".codex/sessions/2026/11/28").join(&name);
        let text = String::from_utf8(files.read(&moved).await.ok().flatten().unwrap_or_default())
            .unwrap_or_default();
        assert!(text.contains(r#""cwd":"/srv/b/wt""#), "{text}");
        assert!(text.contains(r#"["/srv/b/wt"]"#), "{text}");
        assert_eq!(
            files
                .read(&b.path().join(".codex/auth.json"))
                .await
                .ok()
                .flatten(),
            None
        );
    }

    #[tokio::test]
    async fn a_thread_without_a_rollout_is_refused() {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let thread = SessionId::new(THREAD).unwrap_or_else(|e| panic!("{e}"));
        let missing = CodexSessions
            .export_session(&FsFiles::new(), &thread, Path::new("/w"), a.path())
            .await;
        assert!(matches!(missing, Err(ForgeError::InvalidRequest { .. })));
    }
}
