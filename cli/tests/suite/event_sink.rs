//! `--event-sink URL`: every event POSTed with the token; a receiver that is down, slow or
//! answering 500 never changes the run's status.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};

use super::harness::Sandbox;
use super::serve_harness::{Server, client, eventually, read_all, replaying_claude};

#[derive(Clone, Copy, Debug)]
enum Mode {
    Ok,
    Down,
    Slow,
    Fail500,
}

type Got = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn receive(
    State((mode, got)): State<(Mode, Got)>,
    headers: HeaderMap,
    body: String,
) -> StatusCode {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    got.lock()
        .unwrap()
        .push((auth, serde_json::from_str(&body).unwrap()));
    match mode {
        Mode::Slow => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::OK
        }
        Mode::Fail500 => StatusCode::INTERNAL_SERVER_ERROR,
        Mode::Ok | Mode::Down => StatusCode::OK,
    }
}

/// A receiver on a free port (for `Down`, a port nothing listens on).
async fn receiver(mode: Mode) -> (String, Got) {
    let got: Got = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/events", listener.local_addr().unwrap());
    if matches!(mode, Mode::Down) {
        drop(listener);
    } else {
        let app = Router::new()
            .route("/events", post(receive))
            .with_state((mode, Arc::clone(&got)));
        tokio::spawn(async move { axum::serve(listener, app).await });
    }
    (url, got)
}

/// `forge run --json --event-sink URL` on a replayed claude transcript, off the test's
/// runtime thread (the receiver answers on it).
async fn run_with_sink(sandbox: &Sandbox, url: &str) -> Value {
    let mut cmd = sandbox.forge();
    cmd.env("FORGE_EVENT_SINK_TOKEN", "sink-token").args([
        "run",
        "--provider",
        "claude",
        "--json",
        "--event-sink",
        url,
        "hi",
    ]);
    let output = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_posts_every_event_in_order_and_a_bad_sink_changes_nothing() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 0);
    for mode in [Mode::Ok, Mode::Down, Mode::Slow, Mode::Fail500] {
        let (url, got) = receiver(mode).await;
        let result = run_with_sink(&sandbox, &url).await;
        assert_eq!(result["status"], "success", "{mode:?}");
        let delivery = &result["metadata"]["event_sink"];
        let run_id = result["metadata"]["run_id"].as_str().unwrap().to_owned();
        let events = std::fs::read_to_string(
            sandbox
                .work()
                .join(format!(".forgecode/runs/{run_id}/events.jsonl")),
        )
        .unwrap();
        let events: Vec<Value> = events
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        match mode {
            Mode::Ok => {
                assert!(
                    eventually(Duration::from_secs(10), || got.lock().unwrap().len()
                        == events.len())
                    .await
                );
                let got = got.lock().unwrap().clone();
                for ((auth, body), event) in got.iter().zip(&events) {
                    assert_eq!(auth.as_deref(), Some("Bearer sink-token"));
                    assert_eq!(&body["event_data"], event);
                    assert_eq!(body["event_type"], event["type"]);
                    assert_eq!(body["interaction_id"], run_id.as_str());
                    assert_eq!(
                        body["session_id"], result["metadata"]["session_id"],
                        "the session from the first event on"
                    );
                }
            }
            Mode::Down | Mode::Fail500 | Mode::Slow => {
                assert_eq!(delivery["delivered"], 0, "{mode:?}: {delivery}");
            }
        }
        let counted = delivery["delivered"].as_u64().unwrap()
            + delivery["dropped"].as_u64().unwrap()
            + delivery["pending"].as_u64().unwrap();
        assert_eq!(
            counted,
            events.len() as u64,
            "{mode:?}: every event is accounted for: {delivery}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_copies_each_runs_events_to_the_sink() {
    let sandbox = Sandbox::new();
    replaying_claude(&sandbox.work(), 0);
    let (url, got) = receiver(Mode::Ok).await;
    let server =
        tokio::task::block_in_place(|| Server::start(&sandbox, &["--event-sink", &url], &[]));
    let response = client()
        .post(server.url("/v1/runs"))
        .json(&json!({"provider": "claude", "prompt": "hi", "workdir": sandbox.work()}))
        .send()
        .await
        .unwrap();
    let run_id = response.json::<Value>().await.unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let messages = read_all(
        client()
            .get(server.url(&format!("/v1/runs/{run_id}/events")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let events = messages.len() - 1;
    assert!(
        eventually(Duration::from_secs(10), || got.lock().unwrap().len()
            == events)
        .await
    );
    let kinds: Vec<String> = got
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b["event_type"].as_str().unwrap().to_owned())
        .collect();
    let sse: Vec<String> = messages[..events]
        .iter()
        .map(|m| m.event.clone().unwrap())
        .collect();
    assert_eq!(kinds, sse);
    let metrics = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(&format!("forge_sink_delivered_total {events}")),
        "{metrics}"
    );
}
