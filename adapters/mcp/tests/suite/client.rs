//! A minimal MCP-over-HTTP client for the tests and the benchmark: one POST per request.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Client {
    pub url: String,
    pub token: Option<String>,
}

impl Client {
    /// POSTs one JSON-RPC message; returns the HTTP status and the JSON body (Null if none).
    pub async fn post(&self, body: &Value) -> (u16, Value) {
        let rest = self.url.strip_prefix("http://").unwrap();
        let (authority, path) = rest.split_at(rest.find('/').unwrap());
        let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
        let body = body.to_string();
        let auth = match &self.token {
            Some(token) => format!("Authorization: Bearer {token}\r\n"),
            None => String::new(),
        };
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
             {auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        let text = String::from_utf8_lossy(&raw);
        let (head, payload) = text.split_once("\r\n\r\n").unwrap();
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        let payload = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(payload)
        } else {
            payload.to_owned()
        };
        let payload = payload
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .map_or(payload.clone(), str::to_owned);
        (
            status,
            serde_json::from_str(&payload).unwrap_or(Value::Null),
        )
    }

    pub async fn initialize(&self) -> Value {
        self.post(
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"test","version":"1"}}}),
        )
        .await
        .1
    }

    pub async fn list(&self) -> Value {
        self.post(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
            .await
            .1
    }

    pub async fn call(&self, name: &str, args: Value) -> Value {
        self.post(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
            "params":{"name":name,"arguments":args}}))
            .await
            .1
    }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}
