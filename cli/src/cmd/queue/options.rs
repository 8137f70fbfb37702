//! The options of `task run` a queued task travels with, recorded at submit and turned back
//! into `task run` arguments by the worker that claims it. Context files travel by content:
//! the worker's machine may not have the submitter's files.

use serde::{Deserialize, Serialize};

/// One `--context-file`: its name and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFile {
    pub name: String,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default)]
    pub push: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<ContextFile>,
}

impl TaskOptions {
    /// The `task run` arguments before the prompt; context files are written under
    /// `context_dir` first (named by position, so two files of one name do not collide).
    pub fn task_run_args(
        &self,
        repo: &str,
        context_dir: &std::path::Path,
    ) -> std::io::Result<Vec<String>> {
        let mut args: Vec<String> = vec!["task".into(), "run".into(), "--json".into()];
        let mut flag = |name: &str, value: &Option<String>| {
            if let Some(v) = value {
                args.push(format!("--{name}"));
                args.push(v.clone());
            }
        };
        flag("provider", &self.provider);
        flag("model", &self.model);
        flag("base", &self.base);
        flag("expected", &self.expected);
        flag("type", &self.task_type);
        flag("goal-title", &self.goal_title);
        flag("goal-description", &self.goal_description);
        flag("permission-mode", &self.permission_mode);
        if self.push {
            args.push("--push".into());
        }
        for (n, file) in self.context_files.iter().enumerate() {
            let base = std::path::Path::new(&file.name).file_name().map_or_else(
                || "context.md".to_owned(),
                |f| f.to_string_lossy().into_owned(),
            );
            let path = context_dir.join(format!("{n}-{base}"));
            std::fs::create_dir_all(context_dir)?;
            std::fs::write(&path, &file.text)?;
            args.push("--context-file".into());
            args.push(path.display().to_string());
        }
        args.push("--repo".into());
        args.push(repo.to_owned());
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_task_run_arguments() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let options = TaskOptions {
            provider: Some("codex".into()),
            base: Some("main".into()),
            push: true,
            goal_title: Some("Ship it".into()),
            context_files: vec![ContextFile {
                name: "/home/a/notes.md".into(),
                text: "notes".into(),
            }],
            ..TaskOptions::default()
        };
        let args = options
            .task_run_args("https://git.example/r.git", dir.path())
            .unwrap_or_else(|e| panic!("{e}"));
        let context = dir.path().join("0-notes.md");
        assert_eq!(
            args,
            [
                "task",
                "run",
                "--json",
                "--provider",
                "codex",
                "--base",
                "main",
                "--goal-title",
                "Ship it",
                "--push",
                "--context-file",
                &context.display().to_string(),
                "--repo",
                "https://git.example/r.git"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(context).ok().as_deref(),
            Some("notes")
        );
    }

    #[test]
    fn unknown_options_from_a_newer_forge_are_refused() {
        let err = serde_json::from_value::<TaskOptions>(serde_json::json!({"teleport": true}));
        assert!(err.is_err());
        let empty = serde_json::from_value::<TaskOptions>(serde_json::json!({}));
        assert_eq!(empty.ok(), Some(TaskOptions::default()));
    }
}
