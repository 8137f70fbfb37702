//! `serve` against the fake CLI: runs, live SSE, replay, cancel, auth, paths, chat.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{Sandbox, alive};
use super::serve_harness::{
    Message, Server, client, eventually, fake_claude, read_all, read_until, replaying_claude,
};

async fn post_run(server: &Server, body: Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/runs"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn start_run(server: &Server, body: Value) -> String {
    let response = post_run(server, body).await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    let run_id = created["run_id"].as_str().unwrap().to_owned();
    assert_eq!(created["events_url"], format!("/v1/runs/{run_id}/events"));
    run_id
}

async fn events(server: &Server, run_id: &str, query: &str, last_id: Option<&str>) -> Vec<Message> {
    let mut request = client().get(server.url(&format!("/v1/runs/{run_id}/events{query}")));
    if let Some(id) = last_id {
        request = request.header("Last-Event-ID", id);
    }
    read_all(request.send().await.unwrap()).await
}

fn bundle_events(sandbox: &Sandbox, run_id: &str) -> Vec<Value> {
    let path = sandbox
        .work()
        .join(format!(".forgecode/runs/{run_id}/events.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn a_run_streams_every_event_in_order_then_its_result_and_replays_after_an_id() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 5);
    let server = Server::start(&sandbox, &[], &[]);
    let workdir = sandbox.work().display().to_string();
    let run_id = start_run(
        &server,
        json!({"provider": "claude", "prompt": "hi", "workdir": workdir}),
    )
    .await;

    let all = events(&server, &run_id, "", None).await;
    let (result, evs) = all.split_last().unwrap();
    assert_eq!(result.event.as_deref(), Some("result"));
    assert_eq!(result.json()["status"], "success");
    // id = sequence, event = kind, data = the canonical event, as in the bundle.
    let stored = bundle_events(&sandbox, &run_id);
    assert_eq!(evs.len(), stored.len());
    for (i, (m, s)) in evs.iter().zip(&stored).enumerate() {
        assert_eq!(m.id.as_deref(), Some((i + 1).to_string().as_str()));
        assert_eq!(m.event.as_deref(), s["type"].as_str());
        assert_eq!(&m.json(), s);
    }
    let kinds: Vec<&str> = evs.iter().filter_map(|m| m.event.as_deref()).collect();
    insta::assert_yaml_snapshot!("serve_hello_kinds", kinds);

    // Resuming after 2, by header and by query, once the run has ended.
    for (query, header) in [("", Some("2")), ("?after=2", None)] {
        let rest = events(&server, &run_id, query, header).await;
        assert_eq!(rest.len(), all.len() - 2, "{query} {header:?}");
        assert_eq!(rest[0].id.as_deref(), Some("3"));
        assert_eq!(rest.last().unwrap().event.as_deref(), Some("result"));
    }
    // After the last event: only the result.
    let last = evs.len().to_string();
    let tail = events(&server, &run_id, "", Some(&last)).await;
    assert_eq!(tail.len(), 1);
    assert_eq!(tail[0].event.as_deref(), Some("result"));

    // State, list.
    let run: Value = client()
        .get(server.url(&format!("/v1/runs/{run_id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["state"], "finished");
    assert_eq!(run["result"]["status"], "success");
    let list: Value = client()
        .get(server.url("/v1/runs"))
        .query(&[("workdir", workdir.as_str())])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["runs"][0]["record"]["run_id"], run_id.as_str());
    assert_eq!(list["runs"][0]["state"], "finished");

    // A new server (a restart) replays the run from its bundle.
    drop(server);
    let server = Server::start(&sandbox, &[], &[]);
    // (Compared as JSON: result.json keeps raw events as parsed values, keys sorted.)
    let as_json = |ms: &[Message]| -> Vec<(Option<String>, Option<String>, Value)> {
        ms.iter()
            .map(|m| (m.id.clone(), m.event.clone(), m.json()))
            .collect()
    };
    let again = events(&server, &run_id, "", None).await;
    assert_eq!(as_json(&again), as_json(&all));
    let rest = events(&server, &run_id, "?after=2", None).await;
    assert_eq!(as_json(&rest), as_json(&all[2..]));
}

#[tokio::test]
async fn many_subscribers_of_a_live_run_each_get_every_event_in_order() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 30);
    let server = Server::start(&sandbox, &[], &[]);
    let workdir = sandbox.work().display().to_string();
    let run_id = start_run(
        &server,
        json!({"provider": "claude", "prompt": "hi", "workdir": workdir}),
    )
    .await;
    let readers: Vec<_> = (0..20)
        .map(|_| {
            let url = server.url(&format!("/v1/runs/{run_id}/events"));
            tokio::spawn(async move { read_all(client().get(url).send().await.unwrap()).await })
        })
        .collect();
    let mut streams = Vec::new();
    for reader in readers {
        streams.push(reader.await.unwrap());
    }
    let first = &streams[0];
    assert!(first.len() > 2);
    for stream in &streams {
        assert_eq!(stream, first);
    }
}

/// A run whose fake CLI announces its pid and hangs; returns (run id, pid) once announced,
/// with the open stream.
async fn hanging_run(
    server: &Server,
    sandbox: &Sandbox,
    cancel_on_disconnect: bool,
) -> (String, i32, reqwest::Response) {
    fake_claude(
        &sandbox.work(),
        &[("FAKE_ANNOUNCE", "1"), ("FAKE_HANG", "1")],
    );
    let workdir = sandbox.work().display().to_string();
    let run_id = start_run(
        server,
        json!({"provider": "claude", "prompt": "hang", "workdir": workdir, "cancel_on_disconnect": cancel_on_disconnect}),
    )
    .await;
    let mut stream = client()
        .get(server.url(&format!("/v1/runs/{run_id}/events")))
        .send()
        .await
        .unwrap();
    let got = read_until(&mut stream, |m| m.data.contains("\"started\"")).await;
    let started = got.last().unwrap().json();
    let pid = started["raw"]["pid"]
        .as_i64()
        .unwrap_or_else(|| panic!("{started}"));
    (run_id, i32::try_from(pid).unwrap(), stream)
}

#[tokio::test]
async fn delete_cancels_through_the_kill_ladder_and_the_stream_ends_with_the_result() {
    let sandbox = Sandbox::new();
    let server = Server::start(&sandbox, &[], &[]);
    let (run_id, pid, mut stream) = hanging_run(&server, &sandbox, false).await;
    assert!(alive(pid));
    let response = client()
        .delete(server.url(&format!("/v1/runs/{run_id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let rest = read_until(&mut stream, |m| m.event.as_deref() == Some("result")).await;
    let result = rest.last().unwrap().json();
    assert_eq!(result["status"], "partial", "{result}");
    assert!(result["errors"].to_string().contains("cancel"), "{result}");
    assert!(
        eventually(Duration::from_secs(10), || !alive(pid)).await,
        "the CLI outlived its cancel"
    );
    let bundle = sandbox.work().join(format!(".forgecode/runs/{run_id}"));
    assert!(bundle.join("result.json").is_file());
    // A second DELETE: the run has ended.
    let again = client()
        .delete(server.url(&format!("/v1/runs/{run_id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
}

#[tokio::test]
async fn the_last_subscriber_leaving_cancels_a_cancel_on_disconnect_run() {
    let sandbox = Sandbox::new();
    let server = Server::start(&sandbox, &[], &[]);
    let (run_id, pid, stream) = hanging_run(&server, &sandbox, true).await;
    drop(stream);
    assert!(
        eventually(Duration::from_secs(15), || !alive(pid)).await,
        "the CLI outlived its disconnect"
    );
    let bundle = sandbox.work().join(format!(".forgecode/runs/{run_id}"));
    assert!(
        eventually(Duration::from_secs(10), || bundle
            .join("result.json")
            .is_file())
        .await
    );
    let run: Value = client()
        .get(server.url(&format!("/v1/runs/{run_id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["state"], "finished");
    assert_eq!(run["result"]["status"], "partial");
}

#[tokio::test]
async fn an_empty_prompt_succeeds_at_once_with_no_process() {
    let sandbox = Sandbox::new();
    fake_claude(
        &sandbox.work(),
        &[("FAKE_ANNOUNCE", "1"), ("FAKE_HANG", "1")],
    );
    let server = Server::start(&sandbox, &[], &[]);
    let workdir = sandbox.work().display().to_string();
    let run_id = start_run(
        &server,
        json!({"provider": "claude", "prompt": "  ", "workdir": workdir}),
    )
    .await;
    let all = events(&server, &run_id, "", None).await;
    assert_eq!(all.len(), 1);
    let result = all[0].json();
    assert_eq!(result["status"], "success");
    assert_eq!(result["content"], "");
}

#[tokio::test]
async fn bad_requests_and_paths_outside_the_roots_are_400_with_the_reason() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("project")).unwrap();
    std::fs::create_dir_all(sandbox.dir.path().join("outside")).unwrap();
    std::os::unix::fs::symlink(sandbox.dir.path().join("outside"), work.join("escape")).unwrap();
    replaying_claude(&work.join("project"), 0);
    let server = Server::start(&sandbox, &[], &[]);
    let w = work.display().to_string();
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/project")}),
            201,
            "",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/../outside")}),
            400,
            "`..`",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/%2e%2e/outside")}),
            400,
            "percent-encoded",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/escape")}),
            400,
            "outside the server's roots",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": "/etc"}),
            400,
            "outside the server's roots",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": "project"}),
            400,
            "absolute",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/project\u{0}")}),
            400,
            "NUL",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": format!("{w}/missing")}),
            400,
            "does not exist",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": ""}),
            400,
            "empty",
        ),
        (
            json!({"provider": "nope", "prompt": "hi", "workdir": w}),
            400,
            "nope",
        ),
        (
            json!({"provider": "claude", "prompt": "hi"}),
            400,
            "workdir",
        ),
        (
            json!({"provider": "claude", "prompt": "hi", "workdir": w, "colour": 1}),
            400,
            "colour",
        ),
    ];
    for (body, status, reason) in cases {
        let response = post_run(&server, body.clone()).await;
        assert_eq!(response.status().as_u16(), status, "{body}");
        let text = response.text().await.unwrap();
        assert!(text.contains(reason), "{body}: {text}");
    }
    // Query paths are checked the same way (percent-decoded by the server first).
    for (query, status) in [
        (format!("workdir={w}"), 200),
        (format!("workdir={w}/%2E%2E"), 400),
        (format!("workdir={w}%2F..%2F..%2Fetc"), 400),
        ("workdir=%2Fetc".to_owned(), 400),
    ] {
        let response = client()
            .get(server.url(&format!("/v1/runs?{query}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{query}");
    }
    // Run ids are ids, not paths.
    for id in ["..", "..%2F..%2Fetc", "a%00b"] {
        let response = client()
            .get(server.url(&format!("/v1/runs/{id}/events")))
            .send()
            .await
            .unwrap();
        assert!(
            [400, 404].contains(&response.status().as_u16()),
            "{id}: {}",
            response.status()
        );
    }
}

#[tokio::test]
async fn with_a_token_every_route_but_the_page_and_health_needs_it() {
    let sandbox = Sandbox::new();
    let server = Server::start(&sandbox, &[], &[("FORGE_SERVER_TOKEN", "s3cret")]);
    let cases = [
        ("/v1/runs", None, 401),
        ("/v1/runs", Some("Bearer wrong"), 401),
        ("/v1/runs", Some("Bearer s3cre"), 401),
        ("/v1/runs", Some("s3cret"), 401),
        ("/v1/runs", Some("Bearer s3cret"), 200),
        ("/metrics", None, 401),
        ("/metrics", Some("Bearer s3cret"), 200),
        ("/openapi.json", None, 401),
        ("/openapi.json", Some("Bearer s3cret"), 200),
        ("/", None, 200),
        ("/assets/app.js", None, 200),
        ("/health", None, 200),
    ];
    for (path, auth, status) in cases {
        let mut request = client().get(server.url(path));
        if let Some(auth) = auth {
            request = request.header("Authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path} {auth:?}");
    }
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .forge()
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
}

#[tokio::test]
async fn health_metrics_and_openapi_describe_the_server() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 0);
    let server = Server::start(&sandbox, &[], &[]);
    let w = sandbox.work().display().to_string();
    let health: Value = client()
        .get(server.url("/health"))
        .query(&[("projectPath", w.as_str())])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    let claude = &health["providers"]["claude"];
    assert_eq!(claude["installed"], true, "{health}");
    for key in ["authenticated", "version", "supported"] {
        assert!(claude.get(key).is_some(), "{key}: {health}");
    }
    let project = &health["project"];
    assert_eq!(project["valid"], true);
    assert_eq!(project["writable"], true);
    assert_eq!(project["has_forge_config"], true);
    assert_eq!(project["has_instructions"], false);
    let bad = client()
        .get(server.url("/health?projectPath=/etc"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let run_id = start_run(
        &server,
        json!({"provider": "claude", "prompt": "hi", "workdir": w}),
    )
    .await;
    events(&server, &run_id, "", None).await;
    let metrics = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in [
        "forge_executions_total",
        "forge_http_requests_total{method=\"POST\",route=\"/v1/runs\",status=\"201\"} 1",
        "forge_http_open_streams",
        "forge_run_subscribers",
        "forge_sink_dropped_total",
    ] {
        assert!(metrics.contains(name), "{name}:\n{metrics}");
    }
    assert!(metrics.ends_with("# EOF\n"));

    let openapi: Value = client()
        .get(server.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for path in [
        "/v1/runs",
        "/v1/runs/{id}",
        "/v1/runs/{id}/events",
        "/api/chat",
        "/health",
        "/metrics",
    ] {
        assert!(openapi["paths"].get(path).is_some(), "{path}");
    }
}

#[tokio::test]
async fn api_chat_speaks_the_seed_wire() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 0);
    let server = Server::start(&sandbox, &[], &[]);
    let w = sandbox.work().display().to_string();
    let response = client()
        .post(server.url("/api/chat"))
        .json(&json!({"message": "hi", "projectPath": w, "agent": "strategist"}))
        .send()
        .await
        .unwrap();
    let messages = read_all(response).await;
    let (last, rest) = messages.split_last().unwrap();
    assert_eq!(last.data, "[DONE]");
    let (done, tokens) = rest.split_last().unwrap();
    let done = done.json();
    assert_eq!(done["type"], "done");
    assert_eq!(done["result"]["status"], "success");
    let text: String = tokens
        .iter()
        .map(|m| {
            let v = m.json();
            assert_eq!(v["type"], "token", "{v}");
            v["content"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(!text.is_empty());
    assert_eq!(text, done["result"]["content"].as_str().unwrap());
    // The agent prefix reached the CLI's prompt (request.json of the bundle).
    let run_id = done["result"]["metadata"]["run_id"].as_str().unwrap();
    let request = std::fs::read_to_string(
        sandbox
            .work()
            .join(format!(".forgecode/runs/{run_id}/request.json")),
    )
    .unwrap();
    assert!(request.contains("@strategist hi"), "{request}");
}

#[tokio::test]
async fn approvals_are_listed_and_decided_per_repository_inside_the_roots() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .status()
        .unwrap();
    assert!(status.success());
    let server = Server::start(&sandbox, &[], &[]);
    let w = work.display().to_string();
    let list = client()
        .get(server.url("/v1/approvals"))
        .query(&[("repo", w.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    let body: Value = list.json().await.unwrap();
    assert_eq!(body["approvals"], json!([]));
    for (method, path, query, status) in [
        ("GET", "/v1/approvals", "/etc", 400),
        ("GET", "/v1/approvals/a-1", w.as_str(), 404),
        ("POST", "/v1/approvals/a-1/approve", w.as_str(), 404),
        ("POST", "/v1/approvals/a-1/reject", w.as_str(), 404),
        // The client normalises `..` away: no route.
        ("GET", "/v1/approvals/..", w.as_str(), 404),
    ] {
        let request = match method {
            "GET" => client().get(server.url(path)),
            _ => client().post(server.url(path)),
        };
        let response = request.query(&[("repo", query)]).send().await.unwrap();
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert!(
            got == status || (status == 404 && got == 400),
            "{method} {path} {query}: {got} {text}"
        );
    }
}
