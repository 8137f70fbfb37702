//! `serve --queue`: the API over every worker's tasks — submit, list, show, a task's events
//! over SSE as a worker process (another "machine") appends them, resumed with
//! `Last-Event-ID`, and `DELETE` stopping a task on its worker — on SQLite and PostgreSQL;
//! `task show --queue` with the same events and the report.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::queue::{Setup, processes_of};
use super::serve_harness::{Message, client, read_all};

/// A `serve --queue` process on a free loopback port; killed when dropped.
pub(super) struct QueueServer {
    child: Child,
    base: String,
}

impl QueueServer {
    pub(super) fn start(setup: &Setup) -> Self {
        let mut child = setup
            .forge("server")
            .args(["serve", "--addr", "127.0.0.1:0", "--queue", &setup.queue])
            .arg("--root")
            .arg(setup.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line {line:?}"))
            .to_owned();
        Self { child, base }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for QueueServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn submit(server: &QueueServer, setup: &Setup, prompt: &str) -> String {
    let response = client()
        .post(server.url("/v1/tasks"))
        .json(&json!({"repo": setup.repo(), "prompt": prompt}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    let id = body["task_id"].as_str().unwrap().to_owned();
    assert_eq!(body["events_url"], format!("/v1/tasks/{id}/events"));
    id
}

pub(super) async fn get(server: &QueueServer, path: &str) -> (u16, Value) {
    let response = client().get(server.url(path)).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn events(server: &QueueServer, id: &str, last: Option<&str>) -> Vec<Message> {
    let mut request = client().get(server.url(&format!("/v1/tasks/{id}/events")));
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last);
    }
    read_all(request.send().await.unwrap()).await
}

fn ids(messages: &[Message]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| m.id.as_deref()?.parse().ok())
        .collect()
}

async fn a_task_on_another_worker_streams_and_resumes(postgres: bool) {
    let setup = Setup::new(postgres);
    let server = QueueServer::start(&setup);
    let id = submit(&server, &setup, "stream me").await;
    let worker = setup.worker("w1", &[], "30000");
    // Read while the task runs on the worker: the stream ends after the task is final.
    let all = events(&server, &id, None).await;
    let last = all.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("task"), "{all:?}");
    // The worker commits in its cache of the repository (a URL task delivers).
    assert_eq!(last.json()["state"], "succeeded", "{}", last.data);
    assert_eq!(last.json()["report"]["stop_reason"], "validated");
    let numbers = ids(&all);
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>());
    let kinds: Vec<_> = all.iter().filter_map(|m| m.event.as_deref()).collect();
    // The stream opens with the task's pending permission requests (none here), then the
    // task's own events from the first.
    assert_eq!(kinds.first(), Some(&"permissions"), "{kinds:?}");
    assert_eq!(kinds.get(1), Some(&"claimed"), "{kinds:?}");
    assert!(kinds.contains(&"stage"), "{kinds:?}");
    assert_eq!(kinds[kinds.len() - 2], "finished", "{kinds:?}");
    let stages: Vec<Value> = all
        .iter()
        .filter(|m| m.event.as_deref() == Some("stage"))
        .map(|m| m.json()["data"]["stage"].clone())
        .collect();
    assert!(stages.contains(&json!("agent")), "{stages:?}");
    // Resume after event 2: the rest, the same as the first read's.
    let rest = events(&server, &id, Some("2")).await;
    assert_eq!(ids(&rest), numbers[2..].to_vec());
    assert_eq!(rest.last().unwrap().event.as_deref(), Some("task"));
    // The list and the task.
    let (status, list) = get(&server, "/v1/tasks").await;
    assert_eq!(status, 200);
    assert_eq!(list["tasks"][0]["task_id"], id.as_str());
    assert_eq!(list["tasks"][0]["worker"], "w1");
    let (status, task) = get(&server, &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(task["report"]["stop_reason"], "validated");
    // `task show --queue` has the same events, with their times, and the report.
    let out = setup
        .forge("elsewhere")
        .args(["task", "show", "--queue", &setup.queue, &id])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("events (UTC"), "{text}");
    assert!(text.contains("  #1  "), "{text}");
    assert!(text.contains("  stage  agent"), "{text}");
    assert!(text.contains("\"stop_reason\": \"validated\""), "{text}");
    assert_eq!(worker.stop(), Some(0));
}

async fn delete_stops_a_task_on_its_worker(postgres: bool) {
    let setup = Setup::new(postgres);
    let server = QueueServer::start(&setup);
    let id = submit(&server, &setup, "run until deleted").await;
    let worker = setup.worker("w1", &[("FAKE_HANG", "1")], "30000");
    let deadline = Instant::now() + Duration::from_secs(120);
    while processes_of(&id).is_empty() {
        assert!(Instant::now() < deadline, "the task never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let started = Instant::now();
    let response = client()
        .delete(server.url(&format!("/v1/tasks/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({"task_id": id, "state": "cancelling"}));
    let all = events(&server, &id, None).await;
    let took = started.elapsed();
    let last = all.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("task"));
    assert_eq!(last.json()["state"], "cancelled", "{}", last.data);
    assert!(processes_of(&id).is_empty(), "{:?}", processes_of(&id));
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("DELETE to cancelled: {} ms\n", took.as_millis()),
    );
    // A final task cannot be cancelled again; an unknown one is not found.
    for (path, code) in [
        (format!("/v1/tasks/{id}"), 409),
        ("/v1/tasks/q-nope".into(), 404),
    ] {
        let response = client().delete(server.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), code, "{path}");
    }
    assert_eq!(worker.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_task_on_another_worker_streams_and_resumes() {
    a_task_on_another_worker_streams_and_resumes(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_task_on_another_worker_streams_and_resumes() {
    a_task_on_another_worker_streams_and_resumes(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_delete_stops_a_task_on_its_worker() {
    delete_stops_a_task_on_its_worker(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_delete_stops_a_task_on_its_worker() {
    delete_stops_a_task_on_its_worker(true).await;
}

#[tokio::test]
async fn bad_requests_are_refused_with_the_reason() {
    let setup = Setup::new(false);
    let server = QueueServer::start(&setup);
    let check = |body: Value, says: &'static str| {
        let url = server.url("/v1/tasks");
        async move {
            let response = client().post(url).json(&body).send().await.unwrap();
            assert_eq!(response.status(), 400, "{body}");
            let text = response.text().await.unwrap();
            assert!(text.contains(says), "{body}: {text}");
        }
    };
    check(json!({"repo": "file:///r", "prompt": ""}), "prompt").await;
    check(
        json!({"repo": "file:///r", "prompt": "p", "typo": 1}),
        "typo",
    )
    .await;
    // A repository is a URL or a path inside the roots, like a run's workdir: the 400
    // names the roots, and nothing is queued.
    let inside = setup.dir.path().join("app");
    std::fs::create_dir_all(&inside).unwrap();
    for (repo, says) in [
        ("/etc", "outside the server's roots"),
        ("file:///etc", "outside the server's roots"),
        ("relative/path", "absolute"),
        ("/no/such/dir", "does not exist"),
    ] {
        let body = json!({"repo": repo, "prompt": "p"});
        let response = client()
            .post(server.url("/v1/tasks"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{body}");
        let text = response.text().await.unwrap();
        assert!(text.contains(says), "{body}: {text}");
        let roots = setup.dir.path().canonicalize().unwrap();
        assert!(text.contains(&roots.display().to_string()), "{text}");
    }
    let (_, list) = get(&server, "/v1/tasks").await;
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(0), "{list}");
    for repo in [
        inside.display().to_string(),
        "https://example.invalid/o/r.git".to_owned(),
    ] {
        let response = client()
            .post(server.url("/v1/tasks"))
            .json(&json!({"repo": repo, "prompt": "p"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{repo}");
    }
    let (status, _) = get(&server, "/v1/tasks/q-nope").await;
    assert_eq!(status, 404);
    let response = client()
        .get(server.url("/v1/tasks/q-nope/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let response = client()
        .get(server.url("/v1/tasks/q-nope/events"))
        .header("Last-Event-ID", "x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
}

#[test]
fn the_queue_url_and_defaults_come_from_the_user_config() {
    let setup = Setup::new(false);
    let config = setup.dir.path().join("config.toml");
    let base = std::fs::read_to_string(&config).unwrap();
    let run = |args: &[&str]| {
        let out = setup.forge("submitter").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr,
        )
    };
    let submit = ["task", "submit", "--repo", "file:///r", "--json", "p"];
    // No flag, no variable, no [queue]: a usage error saying where a queue comes from.
    let (code, _, stderr) = run(&submit);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no queue: pass --queue URL"), "{stderr}");
    // [queue] url (and max_attempts) stand in for the flags.
    std::fs::write(
        &config,
        format!(
            "{base}\n[queue]\nurl = {:?}\nmax_attempts = 7\n",
            setup.queue
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&submit);
    assert_eq!(code, Some(0), "{stderr}");
    let id = serde_json::from_str::<Value>(&stdout).unwrap()["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = setup.status(&id);
    assert_eq!(status["max_attempts"], 7, "{status}");
    // A bad [queue] table is a usage error naming the key.
    std::fs::write(
        &config,
        format!("{base}\n[queue]\nurl = \"x\"\nlease = 5\n"),
    )
    .unwrap();
    let (code, _, stderr) = run(&submit);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("queue.lease: unknown key"), "{stderr}");
    // An unknown scheme in [queue] url is a usage error too.
    std::fs::write(
        &config,
        format!("{base}\n[queue]\nurl = \"mysql://db/q\"\n"),
    )
    .unwrap();
    let (code, _, stderr) = run(&submit);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("unknown scheme"), "{stderr}");
}
