//! What a CLI reports only on stderr (gemini's retries) is an event when it is written, not
//! after the run: through the REAL process runner, a retry printed on stderr reaches the
//! stream before the CLI's answer, and a retry printed last still makes it into the result.

use std::time::Duration;

use forge_app::CodeAgent;
use forge_domain::AgentEvent;
use forge_ports::ProviderSettings;

use super::harness::{real_runtime, registry};

/// A retry on stderr, a pause, the answer on stdout, and one more stderr line at the end.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo '{"type":"session","id":"s-1"}'
echo 'retry: attempt 1 failed with status 429' >&2
sleep 1
echo '{"type":"result","ok":true,"text":"done"}'
echo 'retry: attempt 2 failed with status 503' >&2
"#;

fn agent(dir: &std::path::Path) -> CodeAgent {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("agent.sh");
    std::fs::write(&script, AGENT).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runtime = real_runtime();
    let settings = ProviderSettings {
        binary: Some(script),
        ..ProviderSettings::default()
    };
    CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", settings)
        .workdir(dir)
        .build()
        .unwrap()
}

fn kind(event: &AgentEvent) -> String {
    match event {
        AgentEvent::Retry { message, .. } => format!("retry {message}"),
        other => other.kind().to_owned(),
    }
}

#[tokio::test]
async fn a_retry_on_stderr_is_streamed_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(dir.path());
    let mut handle = agent.stream(agent.request("go"));
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(30), handle.next_event())
        .await
        .expect("the run goes on")
    {
        seen.push(kind(&event));
    }
    let first_retry = seen.iter().position(|k| k.contains("attempt 1"));
    let answer = seen.iter().position(|k| k == "completed");
    assert!(
        first_retry.is_some() && first_retry < answer,
        "the first retry comes before the answer: {seen:?}"
    );
    assert!(
        seen.iter().any(|k| k.contains("attempt 2")),
        "the retry written last is not lost: {seen:?}"
    );
    let result = handle.result().await;
    assert_eq!(
        result.status,
        forge_domain::ExecutionStatus::Success,
        "{:?}",
        result.errors
    );
}
