//! `task context`: the repository map ranked by the task, shown without running an agent or
//! changing the repository — text and JSON snapshots, `--base` from a scratch work tree,
//! `[task] context_chars`, and the errors a user can make.

use std::path::Path;

use forge_testkit::delivery::{git, init_repo};
use serde_json::Value;

use super::harness::Sandbox;

/// A small Rust/Python/Go repository; the second commit adds the session module.
fn repo(sandbox: &Sandbox) -> std::path::PathBuf {
    let repo = sandbox.work();
    init_repo(&repo);
    for (path, text) in [
        (
            "src/router.rs",
            "pub struct Router;\n\nimpl Router {\n    pub fn nest(self, path: &str) -> Self {\n        self\n    }\n}\n",
        ),
        (
            "src/json.rs",
            "use crate::router::Router;\n\npub fn parse_json(body: &str) -> Option<Router> {\n    None\n}\n",
        ),
        (
            "tools/report.py",
            "class Report:\n    def render(self, rows):\n        return rows\n",
        ),
        (
            "cmd/main.go",
            "package main\n\nfunc Serve(addr string) error {\n\treturn nil\n}\n",
        ),
    ] {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "code"]);
    std::fs::write(
        repo.join("src/session.rs"),
        "pub struct Session;\n\npub fn session_cookie() -> Session {\n    Session\n}\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "session"]);
    repo
}

fn status(repo: &Path) -> String {
    git(repo, &["status", "--porcelain", "--ignored"])
}

#[test]
fn the_map_ranked_by_the_task_as_text_and_json() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    let before = status(&repo);
    let out = sandbox
        .forge()
        .env("XDG_CACHE_HOME", sandbox.xdg())
        .args(["task", "context", "--repo"])
        .arg(&repo)
        .arg("Fix nested routers in Router::nest")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!(
        "task_context_text",
        text.replace(" (6 parsed, 0 cached)", " (N parsed, N cached)")
    );

    let out = sandbox
        .forge()
        .env("XDG_CACHE_HOME", sandbox.xdg())
        .args(["task", "context", "--json", "--repo"])
        .arg(&repo)
        .arg("Fix nested routers in Router::nest")
        .assert()
        .success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["files"][0], "src/router.rs", "{json}");
    assert_eq!(json["budget_chars"], 3000);
    // the second call parsed nothing: the cache had every file
    assert_eq!(
        (json["parsed"].as_u64(), json["cached"].as_u64()),
        (Some(0), Some(6)),
        "{json}"
    );
    assert!(
        json["map"]
            .as_str()
            .unwrap()
            .contains("pub fn nest(self, path: &str) -> Self")
    );
    // nothing in the repository changed
    assert_eq!(status(&repo), before);
}

#[test]
fn base_maps_an_older_commit_and_context_chars_bounds_the_map() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    std::fs::write(repo.join("forge.toml"), "[task]\ncontext_chars = 200\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "config"]);
    let ask = |base: Option<&str>| -> Value {
        let mut cmd = sandbox.forge();
        cmd.env("XDG_CACHE_HOME", sandbox.xdg())
            .args(["task", "context", "--json", "--repo"])
            .arg(&repo);
        if let Some(b) = base {
            cmd.args(["--base", b]);
        }
        let out = cmd.arg("session cookie").assert().success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    let now = ask(None);
    assert_eq!(now["files"][0], "src/session.rs", "{now}");
    assert_eq!(now["budget_chars"], 200);
    assert!(now["map"].as_str().unwrap().chars().count() <= 200, "{now}");
    let old = ask(Some("HEAD~2"));
    assert!(
        !old["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "src/session.rs"),
        "{old}"
    );
    assert!(old["base"].as_str().is_some_and(|b| b.len() == 40), "{old}");
    // the scratch work tree is gone
    let trees = git(&repo, &["worktree", "list"]);
    assert_eq!(trees.lines().count(), 1, "{trees}");
}

#[test]
fn bad_input_says_why() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    for (args, expected) in [
        (
            vec!["--base", "no-such-ref"],
            "--base no-such-ref: no such commit",
        ),
        (vec!["--repo", "/nonexistent/x"], "--repo /nonexistent/x"),
    ] {
        let out = sandbox
            .forge()
            .env("XDG_CACHE_HOME", sandbox.xdg())
            .args(["task", "context"])
            .args(if args[0] == "--repo" {
                vec![]
            } else {
                vec!["--repo", repo.to_str().unwrap()]
            })
            .args(&args)
            .arg("anything")
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let plain = sandbox.dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let out = sandbox
        .forge()
        .args(["task", "context", "--repo"])
        .arg(&plain)
        .arg("x")
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("is not a git repository"));
}
