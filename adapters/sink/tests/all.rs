//! The HTTP event sink against a local receiver: ok, down, slow, answering 500.

// clippy's allow-unwrap-in-tests covers `#[test]` functions only, not the helpers beside them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use forge_adapter_sink::{HttpEventSink, SinkConfig};
use forge_domain::{AgentEvent, RunId, SessionId, SinkDelivery};
use forge_ports::EventSink;
use serde_json::Value;

#[derive(Clone, Copy)]
enum Mode {
    Ok,
    Fail500,
    Slow,
}

/// What the receiver got: (Authorization header, body).
type Got = Arc<Mutex<Vec<(Option<String>, Value)>>>;

#[derive(Clone)]
struct Receiver {
    mode: Mode,
    got: Got,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    r.got
        .lock()
        .unwrap()
        .push((auth, serde_json::from_str(&body).unwrap()));
    match r.mode {
        Mode::Ok => StatusCode::OK,
        Mode::Fail500 => StatusCode::INTERNAL_SERVER_ERROR,
        Mode::Slow => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::OK
        }
    }
}

async fn receiver(mode: Mode) -> (String, Receiver) {
    let r = Receiver {
        mode,
        got: Arc::default(),
    };
    let app = Router::new()
        .route("/events", post(receive))
        .with_state(r.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/events", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, r)
}

/// A URL nothing listens on.
async fn down_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/events", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn events() -> Vec<AgentEvent> {
    vec![
        AgentEvent::SessionStarted {
            session_id: SessionId::new("s-1").unwrap(),
            model: None,
            cwd: None,
            cli_version: None,
            tools: vec![],
        },
        AgentEvent::Text {
            text: "one".into(),
            delta: true,
        },
        AgentEvent::Text {
            text: "two".into(),
            delta: true,
        },
        AgentEvent::Warning {
            message: "careful".into(),
        },
    ]
}

fn config() -> SinkConfig {
    SinkConfig {
        queue: 64,
        retries: 2,
        backoff: Duration::from_millis(10),
        timeout: Duration::from_secs(30),
    }
}

/// Pushes `events` into a run of `sink` and closes it; returns the delivery at close.
fn push_all(sink: &HttpEventSink, events: &[AgentEvent]) -> SinkDelivery {
    let run_id = RunId::new("run-1").unwrap();
    let mut run = sink.open(&run_id);
    let session = SessionId::new("s-1").unwrap();
    for (i, event) in events.iter().enumerate() {
        let session = (i > 0).then_some(&session);
        run.push(event, session, 1_779_000_000_000 + i as u64);
    }
    run.close()
}

async fn settle(sink: &HttpEventSink) -> SinkDelivery {
    for _ in 0..400 {
        let totals = sink.totals();
        if totals.pending == 0 {
            return totals;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    sink.totals()
}

#[tokio::test]
async fn every_event_arrives_in_order_with_the_token_and_the_seed_body() {
    let (url, r) = receiver(Mode::Ok).await;
    let sink = HttpEventSink::new(&url, Some("tok".into()), config()).unwrap();
    push_all(&sink, &events());
    let totals = settle(&sink).await;
    assert_eq!(
        totals,
        SinkDelivery {
            delivered: 4,
            retries: 0,
            dropped: 0,
            pending: 0
        }
    );
    let got = r.got.lock().unwrap().clone();
    assert!(
        got.iter()
            .all(|(auth, _)| auth.as_deref() == Some("Bearer tok"))
    );
    let bodies: Vec<Value> = got.into_iter().map(|(_, b)| b).collect();
    insta::assert_json_snapshot!(bodies);
}

#[tokio::test]
async fn a_sink_that_is_down_answers_500_or_is_slow_never_holds_the_run() {
    let down = down_url().await;
    let (fail, failing) = receiver(Mode::Fail500).await;
    let (slow, _) = receiver(Mode::Slow).await;
    // (url, settles?, expected after settling)
    let cases = [
        (
            down,
            true,
            SinkDelivery {
                delivered: 0,
                retries: 8,
                dropped: 4,
                pending: 0,
            },
        ),
        (
            fail,
            true,
            SinkDelivery {
                delivered: 0,
                retries: 8,
                dropped: 4,
                pending: 0,
            },
        ),
        (
            slow,
            false,
            SinkDelivery {
                delivered: 0,
                retries: 0,
                dropped: 0,
                pending: 4,
            },
        ),
    ];
    for (url, settles, expected) in cases {
        let sink = HttpEventSink::new(&url, None, config()).unwrap();
        // push and close return at once, whatever the receiver does.
        let at_close = push_all(&sink, &events());
        assert_eq!(at_close.delivered, 0, "{url}");
        let totals = if settles {
            settle(&sink).await
        } else {
            sink.totals()
        };
        assert_eq!(totals, expected, "{url}");
    }
    // 500: the first attempt and both retries reached the receiver, for each event.
    assert_eq!(failing.got.lock().unwrap().len(), 12);
}

#[tokio::test]
async fn a_full_queue_drops_the_oldest_and_counts_it() {
    let (slow, _) = receiver(Mode::Slow).await;
    let sink = HttpEventSink::new(
        &slow,
        None,
        SinkConfig {
            queue: 2,
            ..config()
        },
    )
    .unwrap();
    let many: Vec<AgentEvent> = (0..10)
        .map(|i| AgentEvent::Text {
            text: i.to_string().into(),
            delta: true,
        })
        .collect();
    let at_close = push_all(&sink, &many);
    // One in flight (or still queued), at most two queued; the rest dropped.
    assert_eq!(at_close.dropped + at_close.pending, 10);
    assert!(at_close.pending <= 3, "{at_close:?}");
    assert!(at_close.dropped >= 7, "{at_close:?}");
}

#[test]
fn only_http_urls_are_accepted() {
    for (url, ok) in [
        ("http://127.0.0.1:9/x", true),
        ("https://example.invalid/events", true),
        ("ftp://example.invalid/", false),
        ("not a url", false),
        ("", false),
    ] {
        assert_eq!(
            HttpEventSink::new(url, None, SinkConfig::default()).is_ok(),
            ok,
            "{url}"
        );
    }
}
