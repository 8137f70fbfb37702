//! A queued task's options (`forge_app::queue::TaskOptions`, recorded at submit) turned
//! back into `task run` arguments by the worker that claims it. Context files travel by
//! content: they are written here first, under the task's own directory.

use forge_app::queue::TaskOptions;

/// The `task run` arguments of `options` before the prompt; context files are written under
/// `context_dir` first (named by position, so two files of one name do not collide).
///
/// # Errors
/// When a context file cannot be written.
pub fn task_run_args(
    options: &TaskOptions,
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
    flag("provider", &options.provider);
    flag("model", &options.model);
    flag("base", &options.base);
    flag("expected", &options.expected);
    flag("type", &options.task_type);
    flag("goal-title", &options.goal_title);
    flag("goal-description", &options.goal_description);
    flag("permission-mode", &options.permission_mode);
    if options.push {
        args.push("--push".into());
    }
    // A follow-up of a pull request delivers to it (a follow-up by hand of a task without
    // one delivers as its parent did).
    let on_pull_request = options
        .followup
        .as_ref()
        .is_some_and(|of| of.number.is_some());
    if options.pull_request || on_pull_request || options.closes.is_some() {
        args.push("--pull-request".into());
    }
    if let Some(n) = options.closes {
        args.extend(["--closes".into(), n.to_string()]);
    }
    if let Some(of) = &options.followup {
        // The parent's branch is the base and the head: the commit is a fast-forward.
        args.extend(["--continue-branch".into(), of.branch.clone()]);
        if let Some(session) = &of.session {
            args.extend(["--resume-session".into(), session.clone()]);
        }
        match of.reply_to {
            Some(comment) => args.extend(["--reply-to".into(), comment.to_string()]),
            None if on_pull_request => args.push("--reply".into()),
            None => {}
        }
        if let Some(thread) = &of.thread {
            args.extend(["--reply-thread".into(), thread.clone()]);
        }
    }
    for (n, file) in options.context_files.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use forge_app::queue::ContextFile;

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
        let args = task_run_args(&options, "https://git.example/r.git", dir.path())
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
}
