//! The server end to end over HTTP: what each call answers, what the run records, and that
//! stopping frees the port.

use forge_adapter_mcp::McpToolHost;
use forge_domain::ToolExecution;
use forge_ports::ToolHost;
use serde_json::{Value, json};

use super::client::Client;
use super::fixtures::run;

/// What the agent saw: `Ok(text)`, `ToolError(text)`, or `Protocol(message)`.
#[derive(Debug, PartialEq)]
enum Seen {
    Ok(String),
    ToolError(String),
    Protocol(String),
}

fn seen(reply: &Value) -> Seen {
    if let Some(error) = reply.get("error") {
        return Seen::Protocol(error["message"].as_str().unwrap_or_default().to_owned());
    }
    let result = &reply["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if result["isError"].as_bool() == Some(true) {
        Seen::ToolError(text)
    } else {
        Seen::Ok(text)
    }
}

#[tokio::test]
async fn calls_answer_as_their_handler_behaves_and_the_run_keeps_a_record() {
    let server = McpToolHost::new().start(run()).await.unwrap();
    let endpoint = server.endpoint().clone();
    assert!(
        endpoint.url.starts_with("http://127.0.0.1:"),
        "{}",
        endpoint.url
    );
    assert_eq!(endpoint.tool_names, ["echo", "fail", "boom", "slow"]);
    let client = Client {
        url: endpoint.url.clone(),
        token: Some(endpoint.bearer_token.clone()),
    };
    let init = client.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "forge", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );

    let listed = client.list().await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "fail", "boom", "slow"]);

    let cases: Vec<(&str, Value, Seen)> = vec![
        (
            "echo",
            json!({"path": "src/a.rs"}),
            Seen::Ok(r#"{"args":{"path":"/ws/src/a.rs"},"run":"run-1"}"#.into()),
        ),
        (
            "echo",
            json!({"path": "../etc/passwd"}),
            Seen::ToolError(
                "path \"../etc/passwd\" is outside the workspace: it climbs above the workspace root"
                    .into(),
            ),
        ),
        (
            "echo",
            json!({"path": "/etc/passwd"}),
            Seen::ToolError(
                "path \"/etc/passwd\" is outside the workspace: absolute path not under the workspace root"
                    .into(),
            ),
        ),
        (
            "fail",
            json!({}),
            Seen::ToolError("tool \"fail\" failed: disk on fire".into()),
        ),
        (
            "boom",
            json!({}),
            Seen::ToolError("tool \"boom\" failed: the handler panicked: handler blew up".into()),
        ),
        (
            "slow",
            json!({}),
            Seen::ToolError("tool \"slow\" failed: timed out after 100 ms".into()),
        ),
        (
            "nope",
            json!({}),
            Seen::Protocol("tool \"nope\" is not registered with forge".into()),
        ),
    ];
    for (name, args, want) in &cases {
        let reply = client.call(name, args.clone()).await;
        assert_eq!(&seen(&reply), want, "{name} {args}: {reply}");
    }
    // The server survived all of that.
    assert_eq!(
        seen(&client.call("echo", json!({})).await),
        Seen::Ok(r#"{"args":{},"run":"run-1"}"#.into())
    );

    let addr = endpoint
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let record = server.stop().await.unwrap();
    let summary: Vec<(String, bool, Option<&str>)> = record
        .iter()
        .map(|e: &ToolExecution| {
            (
                e.tool.clone(),
                e.is_error,
                e.error.as_ref().map(|e| e.kind()),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("echo".into(), false, None),
            ("echo".into(), true, Some("workspace_security")),
            ("echo".into(), true, Some("workspace_security")),
            ("fail".into(), true, Some("tool_execution")),
            ("boom".into(), true, Some("tool_execution")),
            ("slow".into(), true, Some("tool_execution")),
            ("nope".into(), true, Some("tool_execution")),
            ("echo".into(), false, None),
        ]
    );
    // Stopped: nothing listens there any more, and the port can be bound again.
    assert!(tokio::net::TcpStream::connect(&addr).await.is_err());
    tokio::net::TcpListener::bind(&addr).await.unwrap();
}

#[tokio::test]
async fn without_the_run_token_nothing_is_served() {
    let server = McpToolHost::new().start(run()).await.unwrap();
    let url = server.endpoint().url.clone();
    for token in [None, Some("wrong".to_owned())] {
        let client = Client {
            url: url.clone(),
            token,
        };
        let (status, _) = client
            .post(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
            .await;
        assert_eq!(status, 401);
    }
    assert!(server.stop().await.unwrap().is_empty());
}

#[tokio::test]
async fn dropping_the_server_frees_its_port() {
    let server = McpToolHost::new().start(run()).await.unwrap();
    let addr = server
        .endpoint()
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    drop(server);
    tokio::task::yield_now().await;
    let mut freed = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(&addr).await.is_err() {
            freed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(freed, "{addr} still accepts connections");
}
