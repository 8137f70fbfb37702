//! `fake-model list | serve`: the product command around the scripted model server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::harness::Sandbox;

#[test]
fn list_names_every_builtin_scenario() {
    let out = Sandbox::new()
        .forge()
        .args(["fake-model", "list"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn an_unknown_scenario_is_a_usage_error() {
    Sandbox::new()
        .forge()
        .args(["fake-model", "serve", "--scenario", "no_such_scenario"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no_such_scenario"));
}

/// POSTs an Anthropic Messages request and returns the raw HTTP response.
fn post_messages(base_url: &str) -> String {
    let addr = base_url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = r#"{"model":"m","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"Say hello."}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}"#;
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn serve_prints_where_it_listens_answers_and_stops_on_ctrl_c() {
    let sandbox = Sandbox::new();
    let log = sandbox.work().join("requests.jsonl");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("forge-code-agent"))
        .args([
            "fake-model",
            "serve",
            "--scenario",
            "plain_answer",
            "--request-log",
        ])
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let base_url = first.strip_prefix("listening on ").unwrap().to_owned();
    assert!(base_url.starts_with("http://127.0.0.1:"), "{first}");
    let help: Vec<String> = lines.by_ref().take(9).map(Result::unwrap).collect();
    assert!(
        help.iter()
            .any(|l| l.contains(&format!("ANTHROPIC_BASE_URL={base_url}"))),
        "{help:?}"
    );

    let response = post_messages(&base_url);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("event: message_start"), "{response}");
    assert!(response.contains("\"text_delta\""), "{response}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 1, "{logged}");

    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still serving");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}
