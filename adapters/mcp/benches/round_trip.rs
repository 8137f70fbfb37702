//! Round trip of one tool call through forge's MCP server (client → HTTP → rmcp → engine →
//! handler → back), against calling the handler directly, in the same run. Printed, not
//! asserted. Run: `cargo bench -p forge-adapter-mcp --bench round_trip` (or `cargo xtask bench`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark binary"
)]

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use forge_adapter_mcp::McpToolHost;
use forge_domain::{ForgeError, HostedTool, RunId};
use forge_ports::{RegisteredTool, ToolContext, ToolHandler, ToolHost, ToolRun};
use forge_testkit::fakes::PassthroughWorkspace;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const CALLS: usize = 2_000;
const WARMUP: usize = 100;

struct Echo;

#[async_trait]
impl ToolHandler for Echo {
    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<Value, ForgeError> {
        Ok(json!({"echo": args}))
    }
}

/// One kept-alive HTTP/1.1 connection, as a CLI keeps one.
struct Connection {
    stream: BufReader<TcpStream>,
    authority: String,
    token: String,
}

impl Connection {
    async fn post(&mut self, body: &str) -> String {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
             Authorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
            self.authority,
            self.token,
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        let mut length = None;
        let mut chunked = false;
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).await.unwrap();
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = Some(v.trim().parse::<usize>().unwrap());
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size).await.unwrap();
                let n = usize::from_str_radix(size.trim(), 16).unwrap();
                let mut chunk = vec![0; n + 2];
                self.stream.read_exact(&mut chunk).await.unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else {
            body.resize(length.expect("a length or chunks"), 0);
            self.stream.read_exact(&mut body).await.unwrap();
        }
        String::from_utf8(body).unwrap()
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(name: &str, mut micros: Vec<f64>) -> (f64, f64) {
    micros.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&micros, 0.5), percentile(&micros, 0.99));
    println!("  {name:<34}: p50 {p50:>9.1} µs  p99 {p99:>9.1} µs");
    (p50, p99)
}

#[tokio::main]
async fn main() {
    let handler: Arc<dyn ToolHandler> = Arc::new(Echo);
    let tool = HostedTool::new("echo", "echo", json!({"type": "object"})).unwrap();
    let workspace = Arc::new(PassthroughWorkspace::default());
    let run = ToolRun {
        run_id: RunId::new("bench").unwrap(),
        workspace_root: "/ws".into(),
        workspace: workspace.clone(),
        tools: Arc::from(vec![RegisteredTool {
            tool,
            handler: Arc::clone(&handler),
        }]),
    };
    let ctx = ToolContext {
        run_id: run.run_id.clone(),
        workspace_root: run.workspace_root.clone(),
        workspace,
    };
    let server = McpToolHost::new().start(run).await.unwrap();
    let authority = server
        .endpoint()
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut conn = Connection {
        stream: BufReader::new(TcpStream::connect(&authority).await.unwrap()),
        authority,
        token: server.endpoint().bearer_token.clone(),
    };
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hello"}}})
    .to_string();
    let args = json!({"text": "hello"});

    let mut via_mcp = Vec::with_capacity(CALLS);
    let mut direct = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let started = Instant::now();
        let reply = conn.post(&call).await;
        let mcp = started.elapsed().as_secs_f64() * 1e6;
        assert!(reply.contains("echo"), "{reply}");
        let started = Instant::now();
        let value = handler.call(args.clone(), ctx.clone()).await.unwrap();
        let plain = started.elapsed().as_secs_f64() * 1e6;
        std::hint::black_box(value);
        if i >= WARMUP {
            via_mcp.push(mcp);
            direct.push(plain);
        }
    }
    let record = server.stop().await.unwrap();
    assert_eq!(record.len(), WARMUP + CALLS);

    println!(
        "tool call round trip, {CALLS} calls (after {WARMUP} warm-up), one kept-alive connection:"
    );
    let (d50, d99) = summary("handler called directly", direct);
    let (m50, m99) = summary("through the MCP server (HTTP)", via_mcp);
    println!(
        "  added by MCP                      : p50 {:>9.1} µs  p99 {:>9.1} µs",
        m50 - d50,
        m99 - d99
    );
}
