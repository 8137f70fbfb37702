//! The server over real HTTP: failure knobs, turn accounting, side calls, the request log.

use std::net::SocketAddr;

use forge_adapter_fakemodel::{
    FakeModelOptions, FakeModelServer, LoggedRequest, RunningServer, Scenario,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::fixtures::tools_request;
use forge_adapter_fakemodel::tools::Vendor;

/// A response read to EOF (HTTP/1.0, so no chunked framing; a cut shows as a short body).
struct Reply {
    status: u16,
    headers: String,
    body: String,
}

async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let payload = body.to_string();
    let mut request =
        format!("{method} {path} HTTP/1.0\r\nhost: fake\r\ncontent-type: application/json\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "content-length: {}\r\n\r\n{payload}",
        payload.len()
    ));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    // A cut stream may end in a reset: keep whatever arrived.
    let _ = stream.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        headers: head.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}

async fn start(toml: &str) -> RunningServer {
    let scenario = Scenario::from_toml_str(toml).unwrap();
    FakeModelServer::start(scenario, FakeModelOptions::default())
        .await
        .unwrap()
}

fn claude_turn() -> Value {
    let mut body = tools_request(Vendor::Anthropic);
    body["max_tokens"] = json!(128_000);
    body["stream"] = json!(true);
    body["messages"] = json!([{"role": "user", "content": "hi"}]);
    body
}

async fn claude(server: &RunningServer, session: &str) -> Reply {
    let headers = [
        ("x-claude-code-session-id", session),
        ("x-api-key", "sk-secret"),
    ];
    send(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        &headers,
        &claude_turn(),
    )
    .await
}

async fn codex(server: &RunningServer, thread: &str) -> Reply {
    let mut body = tools_request(Vendor::OpenAi);
    body["stream"] = json!(true);
    send(
        server.addr(),
        "POST",
        "/v1/responses",
        &[("thread-id", thread)],
        &body,
    )
    .await
}

async fn gemini(server: &RunningServer, prompt: &str) -> Reply {
    let mut body = tools_request(Vendor::Gemini);
    body["contents"] = json!([{"role": "user", "parts": [{"text": prompt}]}]);
    let path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
    send(server.addr(), "POST", path, &[], &body).await
}

fn outcomes(log: &[LoggedRequest]) -> Vec<String> {
    log.iter()
        .map(|r| match (r.turn, &r.side_call) {
            (_, Some(side)) => format!("side:{side}"),
            (Some(turn), None) => format!("{turn}:{}", r.outcome),
            (None, None) => r.outcome.clone(),
        })
        .collect()
}

const RATE_LIMITED: &str =
    "name = \"r\"\n[[turns]]\ntext = \"after the limit\"\nfail = { status = 429, times = 1 }\n";

#[tokio::test]
async fn rate_limit_once_then_success_for_every_vendor() {
    let server = start(RATE_LIMITED).await;

    let first = claude(&server, "s1").await;
    assert_eq!(first.status, 429);
    assert!(
        first.headers.contains("retry-after: 0"),
        "{}",
        first.headers
    );
    let error: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(error["error"]["type"], "rate_limit_error");
    let second = claude(&server, "s1").await;
    assert_eq!(second.status, 200);
    assert!(second.headers.contains("text/event-stream"));
    assert!(second.body.contains("after the limit") && second.body.contains("event: message_stop"));

    let first = codex(&server, "t1").await;
    assert_eq!(first.status, 429);
    let error: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(error["error"]["code"], "rate_limit_exceeded");
    assert!(
        codex(&server, "t1")
            .await
            .body
            .contains("event: response.completed")
    );

    let first = gemini(&server, "hello").await;
    assert_eq!(first.status, 429);
    let error: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(error["error"]["status"], "RESOURCE_EXHAUSTED");
    assert_eq!(error["error"]["details"][0]["retryDelay"], "0s");
    assert!(
        gemini(&server, "hello")
            .await
            .body
            .contains("\"finishReason\":\"STOP\"")
    );

    let expected = ["0:failed 429", "0:served"].repeat(3);
    assert_eq!(outcomes(&server.request_log()), expected);
}

/// Gemini's `RetryInfo` detail: a suggested delay, or none at all (gemini prints a different
/// retry line for each, issue 27).
#[tokio::test]
async fn gemini_rate_limits_carry_the_retry_info_asked_for() {
    let cases = [
        ("retry_delay = \"1.5s\"", Some("1.5s")),
        ("retry_info = false", None),
        ("message = \"m\"", Some("0s")),
    ];
    for (knob, want) in cases {
        let toml = format!(
            "name = \"r\"\n[[turns]]\ntext = \"ok\"\nfail = {{ status = 429, times = 1, {knob} }}\n"
        );
        let server = start(&toml).await;
        let first = gemini(&server, "hello").await;
        assert_eq!(first.status, 429, "{knob}");
        let error: Value = serde_json::from_str(&first.body).unwrap();
        let details = error["error"]["details"].as_array().unwrap();
        match want {
            Some(delay) => {
                assert_eq!(details.len(), 1, "{knob}");
                assert_eq!(details[0]["retryDelay"], delay, "{knob}");
            }
            None => assert!(details.is_empty(), "{knob}: {details:?}"),
        }
        assert!(
            gemini(&server, "hello")
                .await
                .body
                .contains("\"finishReason\":\"STOP\"")
        );
    }
}

const RATE_LIMITED_IN_STREAM: &str = "name = \"r\"\n[[turns]]\ntext = \"after the limit\"\n\
    fail = { status = 429, times = 2, in_stream = true, message = \"Rate limit reached. Please try again in 3s.\" }\n";

#[tokio::test]
async fn an_in_stream_rate_limit_is_a_failed_responses_stream_and_an_http_error_elsewhere() {
    let server = start(RATE_LIMITED_IN_STREAM).await;

    for _ in 0..2 {
        let failed = codex(&server, "t1").await;
        assert_eq!(failed.status, 200);
        assert!(failed.headers.contains("text/event-stream"));
        let last = failed
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .next_back()
            .unwrap();
        let event: Value = serde_json::from_str(last).unwrap();
        assert_eq!(event["type"], "response.failed");
        assert_eq!(event["response"]["status"], "failed");
        assert_eq!(
            event["response"]["error"],
            json!({"code": "rate_limit_exceeded", "message": "Rate limit reached. Please try again in 3s."})
        );
        assert!(!failed.body.contains("response.completed"));
    }
    let served = codex(&server, "t1").await;
    assert!(served.body.contains("after the limit") && served.body.contains("response.completed"));

    // Only the Responses API has a failure event; Claude still gets the HTTP error.
    assert_eq!(claude(&server, "s1").await.status, 429);

    let expected = ["0:failed 429", "0:failed 429", "0:served", "0:failed 429"];
    assert_eq!(outcomes(&server.request_log()), expected);
}

#[tokio::test]
async fn server_error_always_never_serves() {
    let server = start(
        &Scenario::builtin("server_error_always")
            .map(|s| toml::to_string(&s).unwrap())
            .unwrap(),
    )
    .await;
    for _ in 0..3 {
        let reply = claude(&server, "s").await;
        assert_eq!(reply.status, 500);
        let error: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(
            error["error"],
            json!({"type": "api_error", "message": "fake model: internal error"})
        );
    }
    assert_eq!(codex(&server, "t").await.status, 500);
    assert_eq!(gemini(&server, "p").await.status, 500);
    assert_eq!(outcomes(&server.request_log()), ["0:failed 500"; 5]);
}

#[tokio::test]
async fn a_cut_stream_is_short_once_then_whole() {
    let server =
        start("name = \"c\"\n[[turns]]\ntext = \"abcdef\"\nchunks = 3\ncut_after_events = 2\n")
            .await;
    let cut = claude(&server, "s").await;
    assert_eq!(cut.status, 200);
    assert_eq!(cut.body.matches("event: ").count(), 2, "{}", cut.body);
    assert!(!cut.body.contains("message_stop"));
    let whole = claude(&server, "s").await;
    assert!(whole.body.contains("event: message_stop"), "{}", whole.body);
    assert_eq!(outcomes(&server.request_log()), ["0:cut", "0:served"]);
}

#[tokio::test]
async fn conversations_keep_their_own_turns_and_finish_politely() {
    let server =
        start("name = \"two\"\n[[turns]]\ntext = \"first\"\n[[turns]]\ntext = \"second\"\n").await;
    assert!(claude(&server, "a").await.body.contains("first"));
    assert!(
        claude(&server, "b").await.body.contains("first"),
        "b must not see a's turn"
    );
    assert!(claude(&server, "a").await.body.contains("second"));
    let done = claude(&server, "a").await;
    assert!(
        done.body.contains("(fake model: scenario finished)") && done.body.contains("end_turn")
    );
    assert!(gemini(&server, "one prompt").await.body.contains("first"));
    assert!(
        gemini(&server, "another prompt")
            .await
            .body
            .contains("first")
    );
    let log = server.request_log();
    assert_eq!(
        outcomes(&log),
        [
            "0:served", "0:served", "1:served", "finished", "0:served", "0:served"
        ]
    );
    assert_eq!(log[1].conversation.as_deref(), Some("anthropic:b"));
}

#[tokio::test]
async fn side_calls_do_not_consume_turns() {
    let server = start("name = \"s\"\n[[turns]]\ntext = \"the turn\"\n").await;
    let addr = server.addr();
    let count = send(
        addr,
        "POST",
        "/v1/messages/count_tokens?beta=true",
        &[],
        &json!({"messages": []}),
    )
    .await;
    assert!(
        serde_json::from_str::<Value>(&count.body).unwrap()["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let title = json!({"model": "claude-haiku", "max_tokens": 512, "messages": [{"role": "user", "content": "title?"}]});
    let title = send(addr, "POST", "/v1/messages", &[], &title).await;
    assert_eq!(
        serde_json::from_str::<Value>(&title.body).unwrap()["content"][0]["text"],
        "Fake session"
    );
    let classifier = json!({"contents": [], "generationConfig": {"responseJsonSchema": {"type": "OBJECT",
        "properties": {"complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}}}}});
    let routed = send(
        addr,
        "POST",
        "/v1beta/models/gemini-3.5-flash-lite:generateContent",
        &[],
        &classifier,
    )
    .await;
    let routed: Value = serde_json::from_str(&routed.body).unwrap();
    let answer: Value = serde_json::from_str(
        routed["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(answer["complexity_score"], 10);
    let probe = send(addr, "HEAD", "/api/hello", &[], &Value::Null).await;
    assert_eq!(probe.status, 200);
    assert!(claude(&server, "s").await.body.contains("the turn"));
    let seen = outcomes(&server.request_log());
    assert_eq!(
        seen,
        [
            "side:count_tokens",
            "side:no_tools",
            "side:structured_output",
            "side:connectivity_probe",
            "0:served"
        ]
    );
}

#[tokio::test]
async fn health_unknown_routes_and_the_request_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.jsonl");
    let options = FakeModelOptions {
        port: None,
        request_log_path: Some(path.clone()),
    };
    let server = FakeModelServer::start(Scenario::builtin("plain_answer").unwrap(), options)
        .await
        .unwrap();
    let health = send(server.addr(), "GET", "/health", &[], &Value::Null).await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let missing = send(
        server.addr(),
        "POST",
        "/v2/whatever?x=1",
        &[],
        &json!({"a": 1}),
    )
    .await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("no route for POST /v2/whatever"));
    claude(&server, "sess").await;
    let in_memory = server.request_log();
    server.shutdown().await.unwrap();

    let lines: Vec<LoggedRequest> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, in_memory);
    assert_eq!(lines.iter().map(|l| l.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        (lines[1].path.as_str(), lines[1].query.as_deref()),
        ("/v2/whatever", Some("x=1"))
    );
    assert_eq!(lines[1].body, json!({"a": 1}));
    let turn = &lines[2];
    assert_eq!(
        (turn.vendor.as_deref(), turn.turn, turn.outcome.as_str()),
        (Some("anthropic"), Some(0), "served")
    );
    assert_eq!(
        turn.headers
            .get("x-claude-code-session-id")
            .map(String::as_str),
        Some("sess")
    );
    assert!(
        !turn.headers.contains_key("x-api-key"),
        "credentials must not be logged"
    );
    assert!(turn.timestamp_ms > 0);
}

#[tokio::test]
async fn a_chosen_port_is_used() {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let options = FakeModelOptions {
        port: Some(port),
        request_log_path: None,
    };
    let server = FakeModelServer::start(Scenario::builtin("plain_answer").unwrap(), options)
        .await
        .unwrap();
    assert_eq!(server.base_url(), format!("http://127.0.0.1:{port}"));
    server.shutdown().await.unwrap();
}

/// Every answered turn logs the usage its response reported, so a run's usage can be
/// checked exactly against what was served to it; failed turns report none.
#[tokio::test]
async fn served_turns_log_the_usage_they_reported() {
    let server = start(RATE_LIMITED).await;
    let _ = claude(&server, "s1").await;
    let served = claude(&server, "s1").await;
    let _ = codex(&server, "t1").await;
    let _ = codex(&server, "t1").await;
    let log = server.request_log();
    let usage: Vec<_> = log.iter().map(|r| (r.outcome.as_str(), r.usage)).collect();
    assert_eq!(usage.len(), 4);
    assert_eq!(usage[0], ("failed 429", None));
    assert_eq!(usage[2], ("failed 429", None));
    for (outcome, u) in [usage[1], usage[3]] {
        assert_eq!(outcome, "served");
        let u = u.unwrap();
        assert!(u.input_tokens > 0 && u.output_tokens > 0, "{u:?}");
    }
    // The logged figures are the ones the stream carried.
    let claude_usage = log[1].usage.unwrap();
    assert!(
        served
            .body
            .contains(&format!("\"input_tokens\":{}", claude_usage.input_tokens))
    );
    assert!(
        served
            .body
            .contains(&format!("\"output_tokens\":{}", claude_usage.output_tokens))
    );
}

#[tokio::test]
async fn routes_give_marked_conversations_their_own_script() {
    let server = start(
        "name = \"routed\"\n[[turns]]\ntext = \"main\"\n\
         [[routes]]\nprompt_contains = \"PLAN\"\n[[routes.turns]]\ntext = \"plan one\"\n[[routes.turns]]\ntext = \"plan two\"\n\
         [[routes]]\nprompt_contains = \"TASK\"\n[[routes.turns]]\ntext = \"task done\"\n",
    )
    .await;
    assert!(
        gemini(&server, "PLAN: iteration 1")
            .await
            .body
            .contains("plan one")
    );
    assert!(
        gemini(&server, "TASK: write a file")
            .await
            .body
            .contains("task done")
    );
    // Another conversation of the same route starts its script from the top.
    assert!(
        gemini(&server, "PLAN: iteration 2")
            .await
            .body
            .contains("plan one")
    );
    // The same conversation goes on in its route's script.
    assert!(
        gemini(&server, "PLAN: iteration 1")
            .await
            .body
            .contains("plan two")
    );
    // No marker: the main script; a look-alike in lower case is no marker.
    assert!(gemini(&server, "plan nothing").await.body.contains("main"));
}

#[test]
fn a_route_without_marker_or_turns_is_refused() {
    for text in [
        "name = \"r\"\n[[turns]]\ntext = \"m\"\n[[routes]]\nprompt_contains = \"\"\n[[routes.turns]]\ntext = \"x\"\n",
        "name = \"r\"\n[[turns]]\ntext = \"m\"\n[[routes]]\nprompt_contains = \"X\"\nturns = []\n",
    ] {
        let err = Scenario::from_toml_str(text).unwrap_err().to_string();
        assert!(err.contains("route 0"), "{err}");
    }
}
