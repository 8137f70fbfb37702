//! Log records land inside the run's span, at the right levels, with the right fields.

use std::io::Write;
use std::sync::{Arc, Mutex};

use forge_adapter_telemetry::{NoopLogger, TracingLogger};
use forge_domain::{AgentEvent, ExecutionResult, ExecutionStatus, ForgeError, ProviderId, RunId};
use forge_ports::Logger;
use tracing_subscriber::fmt::MakeWriter;

/// A `MakeWriter` appending everything to one shared buffer.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Runs `body` under a plain-text subscriber at `level` and returns what it wrote.
fn capture(level: tracing::Level, body: impl FnOnce()) -> String {
    let buffer = Buffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(buffer.clone())
        .with_max_level(level)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .finish();
    tracing::subscriber::with_default(subscriber, body);
    String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
}

fn one_run(logger: &dyn Logger) {
    let run = logger.run(
        &RunId::new("0199-run").unwrap(),
        &ProviderId::new("claude").unwrap(),
    );
    run.info("spawned");
    run.event(&AgentEvent::Text {
        text: "a prompt body that must not be logged".into(),
        delta: true,
    });
    run.warn("stderr was long");
    let mut result =
        ExecutionResult::empty(ProviderId::new("claude").unwrap(), ExecutionStatus::Error);
    result.metadata.duration_ms = Some(1500);
    result.metadata.cost_usd = Some(0.125);
    result.errors.push(ForgeError::Cancelled);
    run.finished(&result);
    logger.warn("outside any run");
}

#[test]
fn debug_level_shows_events_inside_the_run_span() {
    let text = capture(tracing::Level::DEBUG, || one_run(&TracingLogger::new()));
    insta::assert_snapshot!(text);
    assert!(!text.contains("must not be logged"));
}

#[test]
fn info_level_hides_events() {
    let text = capture(tracing::Level::INFO, || one_run(&TracingLogger::new()));
    assert!(!text.contains("agent event"), "{text}");
    assert!(text.contains("run finished"), "{text}");
}

#[test]
fn noop_logger_writes_nothing() {
    assert_eq!(capture(tracing::Level::TRACE, || one_run(&NoopLogger)), "");
}
