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

#[test]
fn baseline_runs_the_validation_steps_in_a_scratch_work_tree() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    std::fs::write(
        repo.join("forge.toml"),
        "[validation]\nlint = \"true\"\ntest = \"sh check.sh\"\n",
    )
    .unwrap();
    // A runner's output (cargo's format), a build product written in the work tree, and a
    // failure; the scratch tree is the only place it may land.
    std::fs::write(
        repo.join("check.sh"),
        "echo built > product.bin\necho 'test report::tests::totals ... FAILED'\necho 'test report::tests::rows ... ok'\necho 'test result: FAILED. 1 passed; 1 failed'\nexit 101\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "validation"]);
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
    let before = status(&repo);
    let out = sandbox
        .forge()
        .env("XDG_CACHE_HOME", sandbox.xdg())
        .args(["task", "context", "--baseline", "--json", "--repo"])
        .arg(&repo)
        .arg("Fix the report totals")
        .assert()
        .success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let b = &json["baseline"];
    assert_eq!(b["commit"], head.as_str(), "{json}");
    assert_eq!(b["source"], "forge.toml [validation]");
    assert_eq!(b["passed"], false);
    let steps: Vec<(String, bool, Value)> = b["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["passed"].as_bool().unwrap(),
                s["failing_tests"].clone(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            ("lint".to_owned(), true, serde_json::json!([])),
            (
                "test".to_owned(),
                false,
                serde_json::json!(["report::tests::totals"])
            ),
        ],
        "{json}"
    );
    assert_eq!(b["steps"][1]["exit_code"], 101);
    // the map is still the work tree's, and nothing in the repository changed
    assert_eq!(json["base"], Value::Null);
    assert_eq!(status(&repo), before);
    assert!(!repo.join("product.bin").exists());
    let trees = git(&repo, &["worktree", "list"]);
    assert_eq!(trees.lines().count(), 1, "{trees}");

    let out = sandbox
        .forge()
        .env("XDG_CACHE_HOME", sandbox.xdg())
        .args(["task", "context", "--baseline", "--repo"])
        .arg(&repo)
        .arg("Fix the report totals")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains(&format!(
            "baseline at {} (forge.toml [validation]): already failing",
            &head[..12]
        )),
        "{text}"
    );
    assert!(
        text.contains("  test     FAIL (exit 101)  `sh check.sh`"),
        "{text}"
    );
    assert!(
        text.contains("failing tests: report::tests::totals"),
        "{text}"
    );
}

#[test]
fn baseline_without_a_validation_step_says_why() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    let out = sandbox
        .forge()
        .env("XDG_CACHE_HOME", sandbox.xdg())
        .args(["task", "context", "--baseline", "--repo"])
        .arg(&repo)
        .arg("anything")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--baseline: no validation step to run")
            && stderr.contains("[validation] test"),
        "{stderr}"
    );
    let trees = git(&repo, &["worktree", "list"]);
    assert_eq!(trees.lines().count(), 1, "{trees}");
}
