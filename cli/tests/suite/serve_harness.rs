//! A `forge-code-agent serve` process on a free loopback port, and an SSE reader.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::harness::{Sandbox, fake, fixture};

/// A running server; killed when dropped.
pub struct Server {
    child: Child,
    pub base: String,
}

impl Server {
    /// `serve --addr 127.0.0.1:0 --root <sandbox>/work` plus `extra`, with the sandbox's
    /// environment (and `env`).
    pub fn start(sandbox: &Sandbox, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("forge-code-agent"));
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("FORGE_") || key.starts_with("FAKE_") {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.current_dir(sandbox.work())
            .env("XDG_CONFIG_HOME", sandbox.xdg())
            .envs(env.iter().copied())
            .args(["serve", "--addr", "127.0.0.1:0", "--root"])
            .arg(sandbox.work())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line {line:?}"))
            .to_owned();
        Self { child, base }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// A `forge.toml` in `dir` pointing claude at the fake CLI with `env`.
pub fn fake_claude(dir: &Path, env: &[(&str, &str)]) {
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k} = {}", toml_str(v)))
        .collect();
    let text = format!(
        "[providers.claude]\nbinary = {}\n\n[providers.claude.env]\n{}\n",
        toml_str(&fake().display().to_string()),
        env.join("\n")
    );
    std::fs::write(dir.join("forge.toml"), text).unwrap();
}

/// The fake CLI replaying claude's recorded `hello`, `delay_ms` between lines.
pub fn replaying_claude(dir: &Path, delay_ms: u64) {
    let replay = fixture("claude", "hello").display().to_string();
    fake_claude(
        dir,
        &[
            ("FAKE_REPLAY", &replay),
            ("FAKE_DELAY_MS", &delay_ms.to_string()),
        ],
    );
}

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// One SSE message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

impl Message {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap()
    }
}

/// Parses complete SSE messages off the front of `buffer` (comments dropped).
pub fn parse_sse(buffer: &mut String) -> Vec<Message> {
    let mut out = Vec::new();
    while let Some(end) = buffer.find("\n\n") {
        let block: String = buffer.drain(..end + 2).collect();
        let mut message = Message {
            id: None,
            event: None,
            data: String::new(),
        };
        let mut any = false;
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                message.id = Some(v.trim_start().to_owned());
                any = true;
            } else if let Some(v) = line.strip_prefix("event:") {
                message.event = Some(v.trim_start().to_owned());
                any = true;
            } else if let Some(v) = line.strip_prefix("data:") {
                if !message.data.is_empty() {
                    message.data.push('\n');
                }
                message.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                any = true;
            }
        }
        if any {
            out.push(message);
        }
    }
    out
}

/// Reads a whole event stream (it ends after `result`).
pub async fn read_all(response: reqwest::Response) -> Vec<Message> {
    assert_eq!(response.status(), 200);
    let mut text = response.text().await.unwrap();
    parse_sse(&mut text)
}

/// Reads until `stop` holds for a message; returns what was read and the open response.
pub async fn read_until(
    response: &mut reqwest::Response,
    mut stop: impl FnMut(&Message) -> bool,
) -> Vec<Message> {
    let mut buffer = String::new();
    let mut got = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        for message in parse_sse(&mut buffer) {
            let done = stop(&message);
            got.push(message);
            if done {
                return got;
            }
        }
    }
    got
}

/// Polls until `cond` holds or `timeout` passes, letting the runtime's other tasks run (a
/// dropped response closes its connection from one of them).
pub async fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cond()
}
