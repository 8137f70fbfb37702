//! The task queue through the binary: worker processes, each with its own HOME and no git
//! identity (as fresh separate machines would be), run submitted `--push` tasks with the
//! fake CLI as their agent (a script that writes `answer.txt` first) — each committed and
//! pushed to a bare repository once, a task of a worker killed with -9 finished and pushed
//! once elsewhere, a task a dead worker had pushed not run again, a cancel from another
//! shell stopping a running task — on SQLite and on PostgreSQL.

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
        // The repository's own check (a queue task with no validation step fails).
        std::fs::write(
            src.join("forge.toml"),
            "[validation]\ntest = \"[ ! -e answer.txt ] || grep -q answer answer.txt\"\n",
        )
        .unwrap();
        git(&src, &["init", "-q", "-b", "main"]);
        git(&src, &["add", "-A"]);
        git(&src, &["commit", "-q", "-m", "init"]);
        git(dir.path(), &["clone", "-q", "--bare", "src", "remote.git"]);
        // Every update of a ref gets a reflog line: a branch pushed twice would show two.
        git(
            &dir.path().join("remote.git"),
            &["config", "core.logAllRefUpdates", "always"],
        );
        let agent = dir.path().join("agent.sh");
        std::fs::write(
            &agent,
            format!(
                "#!/bin/sh\ncase \"$1\" in --version) ;; *) echo \"answer $$\" > answer.txt; [ -z \"$AGENT_ALSO\" ] || echo 'API_KEY=1' > \"$AGENT_ALSO\" ;; esac\nexec {:?} \"$@\"\n",
                fake().display().to_string()
            ),
        )
        .unwrap();
        let mut perms = std::fs::metadata(&agent).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&agent, perms).unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "default_provider = \"claude\"\n[providers.claude]\nbinary = {:?}\n",
                agent.display().to_string()
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
            if key.starts_with("FORGE_")
                || key.starts_with("FAKE_")
                || key.starts_with("GIT_")
                || key == "EMAIL"
            {
                cmd.env_remove(key.as_ref());
            }
        }
        let home = self.dir.path().join(home);
        std::fs::create_dir_all(&home).unwrap();
        // No git identity: an empty HOME and no system configuration.
        cmd.env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("FORGE_CONFIG", self.dir.path().join("config.toml"))
            .env("FAKE_REPLAY", fixture("claude", "hello"))
            .env("FAKE_VERSION", "2.1.330")
            .env("NO_COLOR", "1")
            .current_dir(&home)
            .stdin(Stdio::null());
        cmd
    }

    pub(super) fn submit(&self, prompt: &str) -> String {
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
            .args(["--push", "--json", prompt])
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
        self.worker_on(&self.queue, name, extra_env, lease_ms)
    }

    /// A worker on the queue at `queue` (another way to the same database).
    fn worker_on(
        &self,
        queue: &str,
        name: &str,
        extra_env: &[(&str, &str)],
        lease_ms: &str,
    ) -> Worker {
        let mut cmd = self.forge(name);
        cmd.args(["worker", "--queue", queue, "--name", name])
            .args(["--lease-ms", lease_ms, "--drain-secs", "5"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        Worker(cmd.spawn().unwrap())
    }
}

/// `git` in the bare remote, its stdout.
pub(super) fn remote_git(setup: &Setup, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(setup.dir.path().join("remote.git"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The remote's commits (any ref) whose message has the trailer `Forge-Task: <id>`.
fn trailer_commits(setup: &Setup, id: &str) -> Vec<String> {
    let needle = format!("Forge-Task: {id}");
    remote_git(setup, &["log", "--all", "--format=%H%n%B%x1e"])
        .split('\u{1e}')
        .filter_map(|record| {
            let mut lines = record.trim_start().lines();
            let sha = lines.next()?.to_owned();
            lines.any(|l| l.trim_end() == needle).then_some(sha)
        })
        .collect()
}

/// The remote's `forge/*` branches.
pub(super) fn task_branches(setup: &Setup) -> Vec<String> {
    remote_git(
        setup,
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/forge/",
        ],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// One branch `forge/<id>` on the remote, updated once (one push), holding one commit on
/// top of `main` — the one commit with the task's trailer — by the identity `author`.
pub(super) fn assert_delivered_once(setup: &Setup, id: &str, author: &str) {
    let branch = format!("forge/{id}");
    let commits = trailer_commits(setup, id);
    assert_eq!(
        commits.len(),
        1,
        "{id}: commits with its trailer {commits:?}"
    );
    let tip = remote_git(setup, &["rev-parse", &format!("refs/heads/{branch}")]);
    assert_eq!(tip.trim(), commits[0], "{branch}");
    let ahead = remote_git(setup, &["rev-list", "--count", &format!("main..{branch}")]);
    assert_eq!(ahead.trim(), "1", "{branch}: commits on top of main");
    let pushes = remote_git(setup, &["reflog", "show", &format!("refs/heads/{branch}")]);
    assert_eq!(pushes.lines().count(), 1, "{branch} updated: {pushes}");
    let by = remote_git(setup, &["log", "-1", "--format=%an <%ae>", &commits[0]]);
    assert_eq!(by.trim(), author, "{branch}");
}

pub(super) const BUILT_IN: &str = "forge-code-agent <forge-code-agent@users.noreply.invalid>";

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

pub(super) const LIMIT: Duration = Duration::from_secs(120);

pub(super) fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap_or_default()
}

pub(super) fn is_final(v: &Value) -> bool {
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
    let ids: Vec<String> = (0..12)
        .map(|n| setup.submit(&format!("task {n}")))
        .collect();
    let workers = [
        setup.worker("w1", &[], "30000"),
        setup.worker("w2", &[], "30000"),
        setup.worker("w3", &[], "30000"),
    ];
    assert!(
        wait_for(LIMIT, || ids.iter().all(|id| is_final(&setup.status(id)))),
        "not every task finished"
    );
    for id in &ids {
        let status = setup.status(id);
        assert_eq!(state(&status), "succeeded", "{status}");
        assert_eq!(status["attempts"], 1, "{status}");
        assert_eq!(status["exit_code"], 0, "{status}");
        assert!(
            matches!(status["worker"].as_str(), Some("w1" | "w2" | "w3")),
            "{status}"
        );
        // The queue's id is the pipeline's: report, branch and trailer agree.
        let report = &status["report"];
        assert_eq!(report["task_id"], id.as_str(), "{status}");
        assert_eq!(report["branch"], format!("forge/{id}"), "{status}");
        assert_eq!(report["delivery"]["pushed"], true, "{status}");
        assert_eq!(
            report["delivery"]["author"]["source"], "built_in",
            "{status}"
        );
        assert_delivered_once(&setup, id, BUILT_IN);
    }
    assert_eq!(task_branches(&setup).len(), ids.len());
    for worker in workers {
        assert_eq!(worker.stop(), Some(0));
    }
}

/// What a worker that dies after its push leaves: the task pushed, the queue not told. The
/// worker that takes it over finds the commit by its trailer and runs nothing again.
fn a_task_a_dead_worker_pushed_is_not_run_again(postgres: bool) {
    let setup = Setup::new(postgres);
    let id = setup.submit("pushed before its worker died");
    // The dead worker's `task run`, as its runner starts it.
    let out = setup
        .forge("dead-machine")
        .args(["task", "run", "--json", "--push", "--task-id", &id])
        .args(["--repo", &setup.repo(), "pushed before its worker died"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_delivered_once(&setup, &id, BUILT_IN);
    let pushed = trailer_commits(&setup, &id);
    let rescuer = setup.worker("rescuer", &[], "30000");
    assert!(wait_for(LIMIT, || is_final(&setup.status(&id))));
    let status = setup.status(&id);
    assert_eq!(state(&status), "succeeded", "{status}");
    assert_eq!(status["worker"], "rescuer", "{status}");
    let delivery = &status["report"]["delivery"];
    assert_eq!(delivery["commit"], pushed[0].as_str(), "{status}");
    assert_eq!(delivery["pushed"], true, "{status}");
    assert!(
        status["report"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("earlier attempt")),
        "{status}"
    );
    assert_delivered_once(&setup, &id, BUILT_IN);
    assert_eq!(rescuer.stop(), Some(0));
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
    // The dead worker got as far as the agent: nothing of it reached the remote.
    assert!(task_branches(&setup).is_empty());
    let rescuer = setup.worker("rescuer", &[], "30000");
    assert!(wait_for(LIMIT, || is_final(&setup.status(&id))));
    let status = setup.status(&id);
    assert_eq!(state(&status), "succeeded", "{status}");
    assert_eq!(status["attempts"], 2, "{status}");
    assert_eq!(status["worker"], "rescuer", "{status}");
    assert_eq!(status["last_error"], "lease of doomed ran out", "{status}");
    assert_delivered_once(&setup, &id, BUILT_IN);
    assert_eq!(task_branches(&setup), [format!("forge/{id}")]);
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
fn sqlite_a_task_a_dead_worker_pushed_is_not_run_again() {
    a_task_a_dead_worker_pushed_is_not_run_again(false);
}

#[test]
fn postgres_a_task_a_dead_worker_pushed_is_not_run_again() {
    a_task_a_dead_worker_pushed_is_not_run_again(true);
}

/// `task run --repo URL --push` on a machine as `home` sets it up; its JSON report.
fn run_on_url(setup: &Setup, home: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let out = setup
        .forge(home)
        .args(["task", "run", "--json", "--push", "--repo", &setup.repo()])
        .args(extra)
        .arg("write the answer")
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), report, stderr)
}

#[test]
fn a_task_on_a_url_is_committed_and_pushed_by_the_identity_it_reports() {
    let setup = Setup::new(false);
    // A machine whose git knows who it is.
    let home = setup.dir.path().join("git-user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = Ada\n\temail = ada@example.invalid\n",
    )
    .unwrap();
    // A machine whose forge configuration names the author.
    let configured = setup.dir.path().join("configured");
    std::fs::create_dir_all(&configured).unwrap();
    let config = format!(
        "{}[delivery]\nauthor = \"Forge Bot <bot@example.invalid>\"\n",
        std::fs::read_to_string(setup.dir.path().join("config.toml")).unwrap()
    );
    std::fs::write(configured.join("config.toml"), config).unwrap();
    let check = |home: &str, extra: &[&str], source: &str, author: &str| {
        let (code, report, stderr) = run_on_url(&setup, home, extra);
        assert_eq!(code, Some(0), "{home}: {stderr}");
        let delivery = &report["delivery"];
        assert_eq!(delivery["decision"], "committed", "{report}");
        assert_eq!(delivery["pushed"], true, "{report}");
        assert_eq!(delivery["author"]["source"], source, "{report}");
        let id = report["task_id"].as_str().unwrap().to_owned();
        assert_delivered_once(&setup, &id, author);
        id
    };
    check("fresh", &[], "built_in", BUILT_IN);
    check("git-user", &[], "git", "Ada <ada@example.invalid>");
    let config_file = configured.join("config.toml").display().to_string();
    let (code, report, stderr) = {
        let out = setup
            .forge("configured")
            .env("FORGE_CONFIG", &config_file)
            .args(["task", "run", "--json", "--push", "--repo", &setup.repo()])
            .args(["--task-id", "given-1", "write the answer"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code(),
            report,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(report["task_id"], "given-1", "{report}");
    assert_eq!(report["delivery"]["author"]["source"], "config", "{report}");
    assert_delivered_once(&setup, "given-1", "Forge Bot <bot@example.invalid>");
    // The same task again (another machine taking it over): found, not run, not pushed.
    let (code, report, stderr) = run_on_url(&setup, "fresh", &["--task-id", "given-1"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(report["status"], "committed", "{report}");
    assert_eq!(
        report["delivery"]["commit"],
        trailer_commits(&setup, "given-1")[0].as_str()
    );
    assert_delivered_once(&setup, "given-1", "Forge Bot <bot@example.invalid>");
    assert_eq!(task_branches(&setup).len(), 3);
}

#[test]
fn a_push_that_cannot_happen_is_an_error_saying_why() {
    let setup = Setup::new(false);
    let hook = setup.dir.path().join("remote.git/hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();
    let (code, report, stderr) = run_on_url(&setup, "fresh", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--push asked for, but the push failed"),
        "{stderr}"
    );
    assert!(stderr.contains("pushes are closed today"), "{stderr}");
    let delivery = &report["delivery"];
    assert_eq!(delivery["pushed"], false, "{report}");
    assert!(delivery["commit"].is_string(), "{report}");
    assert!(task_branches(&setup).is_empty());
}

/// `postgres://user@host:port/db` → (`host:port`, the URL with that part replaced by `via`).
fn through(url: &str, via: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, rest) = rest.split_once('@').unwrap();
    let (host, db) = rest.split_once('/').unwrap();
    let host = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    };
    (host, format!("{scheme}://{user}@{via}/{db}"))
}

/// PostgreSQL going away mid-run (every connection cut, new ones refused) and coming back:
/// the workers reconnect, their running tasks record their results, each task finishes
/// once and is pushed once. The database is reached through a loopback forwarder the test
/// stops and starts; the machine's server is never touched.
#[test]
fn postgres_going_away_mid_run_loses_nothing_and_runs_nothing_twice() {
    let setup = Setup::new(true);
    let (server, _) = through(&setup.queue, "x");
    let mut proxy = forge_testkit::tcp_proxy::TcpProxy::start(&server);
    let (_, via_proxy) = through(&setup.queue, &format!("127.0.0.1:{}", proxy.port()));
    let ids: Vec<String> = (0..4).map(|n| setup.submit(&format!("task {n}"))).collect();
    // Each agent takes a few seconds, so tasks are running when the database goes.
    let slow = [("FAKE_DELAY_MS", "800")];
    let workers = [
        setup.worker_on(&via_proxy, "w1", &slow, "30000"),
        setup.worker_on(&via_proxy, "w2", &slow, "30000"),
    ];
    // Both workers up (each runs a task) before the outage: a worker still starting when
    // the database goes fails its start, which is not what this test is about.
    assert!(wait_for(LIMIT, || ids
        .iter()
        .filter(|id| state(&setup.status(id)) == "running")
        .count()
        == 2));
    proxy.stop();
    // The outage: long enough for heartbeats, claims and results to fail and back off.
    std::thread::sleep(Duration::from_secs(3));
    proxy.resume();
    assert!(
        wait_for(LIMIT, || ids.iter().all(|id| is_final(&setup.status(id)))),
        "not every task finished after the database came back"
    );
    for id in &ids {
        let status = setup.status(id);
        assert_eq!(state(&status), "succeeded", "{status}");
        assert_eq!(status["attempts"], 1, "{status}");
        assert_delivered_once(&setup, id, BUILT_IN);
    }
    for worker in workers {
        assert_eq!(worker.stop(), Some(0));
    }
}

/// A risky change of a URL task waits for approval in the worker's cache of the
/// repository; approving it there commits and pushes it to the URL, once.
#[test]
fn an_approved_url_task_is_pushed_to_the_url_once() {
    let setup = Setup::new(false);
    let out = setup
        .forge("worker-machine")
        .env("AGENT_ALSO", ".env")
        .args(["task", "run", "--json", "--push", "--repo", &setup.repo()])
        .args(["--task-id", "held-1", "write the answer"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(10), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["delivery"]["decision"], "pending_approval",
        "{report}"
    );
    assert!(task_branches(&setup).is_empty());
    // <cache>/.forgecode/worktrees/<id>
    let cache = Path::new(report["worktree"].as_str().unwrap())
        .ancestors()
        .nth(3)
        .unwrap()
        .to_path_buf();
    let approve = |code: i32| {
        let out = setup
            .forge("worker-machine")
            .args(["approvals", "approve", "ap-held-1", "--push", "--repo"])
            .arg(&cache)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{stderr}");
    };
    approve(0);
    assert_delivered_once(&setup, "held-1", BUILT_IN);
    // Decided once: a second approval is told, and pushes nothing.
    approve(4);
    assert_delivered_once(&setup, "held-1", BUILT_IN);
}
