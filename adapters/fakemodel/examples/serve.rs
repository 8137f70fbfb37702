//! Serve a scenario until Ctrl-C: `cargo run -p forge-adapter-fakemodel --example serve --
//! <builtin-name | scenario.toml> [port] [request-log.jsonl]`.
//!
//! The product command is `forge-code-agent fake-model serve`; this example is for poking at
//! a real CLI by hand while developing the server.

#![expect(
    clippy::print_stdout,
    reason = "an interactive example prints where it listens"
)]

use std::path::PathBuf;

use forge_adapter_fakemodel::{FakeModelError, FakeModelOptions, FakeModelServer, Scenario};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), FakeModelError> {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "plain_answer".into());
    let scenario = if which.ends_with(".toml") || which.ends_with(".json") {
        Scenario::from_path(&PathBuf::from(&which))?
    } else {
        Scenario::builtin(&which)?
    };
    let options = FakeModelOptions {
        port: args.next().and_then(|p| p.parse().ok()),
        request_log_path: args.next().map(PathBuf::from),
    };
    let server = FakeModelServer::start(scenario, options).await?;
    println!("{}", server.base_url());
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await
}
