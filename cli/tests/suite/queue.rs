//! The task queue through the binary: worker processes, each with its own HOME (as separate
//! machines would be), run submitted tasks with the fake CLI as their agent — once each, a
//! task of a worker killed with -9 finishes elsewhere, a cancel from another shell stops a
//! running task — on SQLite and on PostgreSQL.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use forge_testkit::postgres::FreshDb;
use serde_json::Value;
use tempfile::TempDir;

use super::harness::{fake, fixture, wait_for};

/// A queue, a bare repository to clone, and the configuration every worker shares.
pub(super) struct Setup {
    pub(super) dir: TempDir,
    pub(super) queue: String,
    _db: Option<FreshDb>,
}

fn forge_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_forge-code-agent"))
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

impl Setup {
    pub(super) fn new(postgres: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("a.txt"), "hi\n").unwrap();
        git(&src, &["init", "-q", "-b", "main"]);
        git(&src, &["add", "-A"]);
        git(&src, &["commit", "-q", "-m", "init"]);
        git(dir.path(), &["clone", "-q", "--bare", "src", "remote.git"]);
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "default_provider = \"claude\"\n[providers.claude]\nbinary = {:?}\n",
                fake().display().to_string()
            ),
        )
        .unwrap();
        let (queue, db) = if postgres {
            let db = FreshDb::create_blocking();
            (db.url.clone(), Some(db))
        } else {
            (
                format!("sqlite://{}", dir.path().join("queue.db").display()),
                None,
            )
        };
        Self {
            dir,
            queue,
            _db: db,
        }
    }

    pub(super) fn repo(&self) -> String {
        format!("file://{}", self.dir.path().join("remote.git").display())
    }

    /// `forge-code-agent` with this setup's configuration and its own HOME `home`.
    pub(super) fn forge(&self, home: &str) -> Command {
        let mut cmd = Command::new(forge_bin());
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("FORGE_") || key.starts_with("FAKE_") {
                cmd.env_remove(key.as_ref());
            }
        }
        let home = self.dir.path().join(home);
        std::fs::create_dir_all(&home).unwrap();
        cmd.env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .env("FORGE_CONFIG", self.dir.path().join("config.toml"))
            .env("FAKE_REPLAY", fixture("claude", "hello"))
            .env("FAKE_VERSION", "2.1.330")
            .env("NO_COLOR", "1")
            .current_dir(&home)
            .stdin(Stdio::null());
        cmd
    }

    fn submit(&self, prompt: &str) -> String {
        let out = self
            .forge("submitter")
            .args([
                "task",
                "submit",
                "--queue",
                &self.queue,
                "--repo",
                &self.repo(),
            ])
            .args(["--json", prompt])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["task_id"].as_str().unwrap().to_owned()
    }

    pub(super) fn status(&self, id: &str) -> Value {
        let out = self
            .forge("submitter")
            .args(["task", "status", "--queue", &self.queue, "--json", id])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub(super) fn worker(&self, name: &str, extra_env: &[(&str, &str)], lease_ms: &str) -> Worker {
        let mut cmd = self.forge(name);
        cmd.args(["worker", "--queue", &self.queue, "--name", name])
            .args(["--lease-ms", lease_ms, "--drain-secs", "5"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        Worker(cmd.spawn().unwrap())
    }
}

/// A worker process, ended with SIGKILL if a test fails before stopping it.
pub(super) struct Worker(Child);

impl Worker {
    fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).unwrap()
    }

    fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), signal).unwrap();
    }

    /// SIGTERM, then its exit code.
    pub(super) fn stop(mut self) -> Option<i32> {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        self.0.wait().unwrap().code()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const LIMIT: Duration = Duration::from_secs(120);

fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap_or_default()
}

fn is_final(v: &Value) -> bool {
    !matches!(state(v), "queued" | "running")
}

/// Live processes started for the task (their environment names it).
pub(super) fn processes_of(task: &str) -> Vec<i32> {
    let marker = format!("FORGE_QUEUE_TASK_ID={task}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| super::harness::alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()))
        })
        .collect()
}

fn tasks_spread_over_worker_processes_run_once(postgres: bool) {
    let setup = Setup::new(postgres);
    let ids: Vec<String> = (0..6).map(|n| setup.submit(&format!("task {n}"))).collect();
    let workers = [
        setup.worker("w1", &[], "30000"),
        setup.worker("w2", &[], "30000"),
    ];
    assert!(
        wait_for(LIMIT, || ids.iter().all(|id| is_final(&setup.status(id)))),
        "not every task finished"
    );
    for id in &ids {
        let status = setup.status(id);
        // The fake agent changes nothing: the pipeline ends with no_changes (exit 1).
        assert_eq!(state(&status), "failed", "{status}");
        assert_eq!(status["attempts"], 1, "{status}");
        assert_eq!(status["exit_code"], 1, "{status}");
        assert_eq!(status["report"]["stop_reason"], "no_changes", "{status}");
        assert!(
            matches!(status["worker"].as_str(), Some("w1" | "w2")),
            "{status}"
        );
    }
    for worker in workers {
        assert_eq!(worker.stop(), Some(0));
    }
}

fn a_task_of_a_worker_killed_with_sigkill_finishes_on_another(postgres: bool) {
    let setup = Setup::new(postgres);
    let id = setup.submit("survive a lost worker");
    let doomed = setup.worker("doomed", &[("FAKE_HANG", "1")], "1000");
    assert!(wait_for(LIMIT, || state(&setup.status(&id)) == "running"));
    assert!(wait_for(LIMIT, || !processes_of(&id).is_empty()));
    doomed.signal(nix::sys::signal::Signal::SIGKILL);
    drop(doomed);
    // The lifeline: nothing the dead worker started runs on.
    assert!(
        wait_for(Duration::from_secs(15), || processes_of(&id).is_empty()),
        "left running: {:?}",
        processes_of(&id)
    );
    let rescuer = setup.worker("rescuer", &[], "30000");
    assert!(wait_for(LIMIT, || is_final(&setup.status(&id))));
    let status = setup.status(&id);
    assert_eq!(state(&status), "failed", "{status}");
    assert_eq!(status["attempts"], 2, "{status}");
    assert_eq!(status["worker"], "rescuer", "{status}");
    assert_eq!(status["last_error"], "lease of doomed ran out", "{status}");
    assert_eq!(rescuer.stop(), Some(0));
}

fn a_cancel_from_another_shell_stops_the_running_task(postgres: bool) {
    let setup = Setup::new(postgres);
    let id = setup.submit("run until cancelled");
    let worker = setup.worker("w1", &[("FAKE_HANG", "1")], "30000");
    assert!(wait_for(LIMIT, || !processes_of(&id).is_empty()));
    let started = Instant::now();
    let out = setup
        .forge("canceller")
        .args(["task", "cancel", "--queue", &setup.queue, &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(wait_for(LIMIT, || is_final(&setup.status(&id))));
    let took = started.elapsed();
    let status = setup.status(&id);
    assert_eq!(state(&status), "cancelled", "{status}");
    assert!(processes_of(&id).is_empty(), "{:?}", processes_of(&id));
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("cancel to cancelled: {} ms\n", took.as_millis()),
    );
    assert_eq!(worker.stop(), Some(0));
}

#[test]
fn sqlite_tasks_spread_over_worker_processes_run_once() {
    tasks_spread_over_worker_processes_run_once(false);
}

#[test]
fn postgres_tasks_spread_over_worker_processes_run_once() {
    tasks_spread_over_worker_processes_run_once(true);
}

#[test]
fn sqlite_a_task_of_a_worker_killed_with_sigkill_finishes_on_another() {
    a_task_of_a_worker_killed_with_sigkill_finishes_on_another(false);
}

#[test]
fn postgres_a_task_of_a_worker_killed_with_sigkill_finishes_on_another() {
    a_task_of_a_worker_killed_with_sigkill_finishes_on_another(true);
}

#[test]
fn sqlite_a_cancel_from_another_shell_stops_the_running_task() {
    a_cancel_from_another_shell_stops_the_running_task(false);
}

#[test]
fn postgres_a_cancel_from_another_shell_stops_the_running_task() {
    a_cancel_from_another_shell_stops_the_running_task(true);
}

#[test]
fn queue_urls_that_cannot_be_used_fail_clearly() {
    let setup = Setup::new(false);
    let check = |queue: &str, code: i32, says: &str| {
        let started = Instant::now();
        let out = setup
            .forge("submitter")
            .args([
                "task",
                "submit",
                "--queue",
                queue,
                "--repo",
                "file:///x",
                "p",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{queue}: {stderr}");
        assert!(stderr.contains(says), "{queue}: {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{queue}: a hang"
        );
    };
    check("mysql://db/forge", 2, "unknown scheme");
    check("sqlite://", 2, "path of the database file is missing");
    check(
        "postgres://forge:hunter2@127.0.0.1:1/forge",
        1,
        "postgres://forge@127.0.0.1:1/forge",
    );
}

#[test]
fn push_on_a_repository_url_is_refused_not_silently_dropped() {
    let setup = Setup::new(false);
    for args in [
        vec!["task", "submit", "--queue", &setup.queue, "--push"],
        vec!["task", "run", "--push", "--json"],
    ] {
        let out = setup
            .forge("submitter")
            .args(&args)
            .args(["--repo", &setup.repo(), "a task"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--push with a repository URL"),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        !setup.dir.path().join("queue.db").exists() || {
            // Nothing was queued.
            let out = setup
                .forge("submitter")
                .args(["task", "list", "--queue", &setup.queue, "--json"])
                .output()
                .unwrap();
            serde_json::from_slice::<Value>(&out.stdout).unwrap() == serde_json::json!([])
        }
    );
}
