//! The event sink and the session callback: every event, in order, with the session id
//! from the first sight on; the callback once; the delivery in the result's metadata.

use std::sync::{Arc, Mutex};

use forge_app::{CodeAgent, Runtime, SessionCallback};
use forge_domain::{ExecutionStatus, RunId, SessionId};
use forge_ports::{EventSink, ProviderSettings};
use forge_testkit::fakes::{
    FixedClock, MemoryArtifactStore, PassthroughWorkspace, RecordingLogger, RecordingMetrics,
    RecordingSink, ScriptedProcessRunner, ScriptedRun, SequentialIds,
};

use super::harness::{OK, SESSION, TEXT, registry};

fn agent(
    runs: Vec<ScriptedRun>,
    sink: &RecordingSink,
    sessions: &Arc<Mutex<Vec<(RunId, SessionId)>>>,
) -> CodeAgent {
    let runtime = Runtime {
        runner: Arc::new(ScriptedProcessRunner::new(runs)),
        workspace: Arc::new(PassthroughWorkspace::default()),
        artifacts: Arc::new(MemoryArtifactStore::new()),
        vcs: None,
        logger: Arc::new(RecordingLogger::default()),
        metrics: Arc::new(RecordingMetrics::default()),
        clock: Arc::new(FixedClock::default()),
        ids: Arc::new(SequentialIds::default()),
    };
    let seen = Arc::clone(sessions);
    let callback: SessionCallback = Arc::new(move |run: &RunId, session: &SessionId| {
        seen.lock().unwrap().push((run.clone(), session.clone()));
    });
    CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", ProviderSettings::default())
        .workdir("/ws")
        .event_sink(Arc::new(sink.clone()) as Arc<dyn EventSink>)
        .on_session(callback)
        .build()
        .unwrap()
}

#[tokio::test]
async fn run_and_stream_hand_every_event_to_the_sink_and_the_session_once() {
    for streamed in [false, true] {
        let sink = RecordingSink::default();
        let sessions = Arc::new(Mutex::new(Vec::new()));
        let second_session = r#"{"type":"session","id":"s-2"}"#;
        let a = agent(
            vec![ScriptedRun::lines([SESSION, TEXT, second_session, OK], 0)],
            &sink,
            &sessions,
        );
        let result = if streamed {
            let mut handle = a.stream(a.request("hi"));
            let mut read = Vec::new();
            while let Some(event) = handle.next_event().await {
                read.push(event);
            }
            let pushed: Vec<_> = sink.pushed().into_iter().map(|p| p.2).collect();
            assert_eq!(read, pushed, "the reader and the sink see the same events");
            handle.result().await
        } else {
            a.run(a.request("hi")).await
        };
        assert_eq!(result.status, ExecutionStatus::Success);
        let pushed = sink.pushed();
        let kinds: Vec<&str> = pushed.iter().map(|p| p.2.kind()).collect();
        assert_eq!(
            kinds,
            ["session_started", "text", "session_started", "completed"],
            "streamed {streamed}"
        );
        let s1 = SessionId::new("s-1").unwrap();
        // The first event already carries the session it announces; a later one never replaces it.
        assert!(
            pushed.iter().all(|p| p.1.as_ref() == Some(&s1)),
            "{pushed:?}"
        );
        let run_id = result.metadata.run_id.clone().unwrap();
        assert!(pushed.iter().all(|p| p.0 == run_id));
        assert_eq!(*sessions.lock().unwrap(), vec![(run_id, s1)]);
        let delivery = result.metadata.event_sink.unwrap();
        assert_eq!(delivery.delivered, 4);
    }
}

#[tokio::test]
async fn a_reader_that_stops_reading_does_not_stop_the_sink() {
    let sink = RecordingSink::default();
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let a = agent(
        vec![ScriptedRun::lines([SESSION, TEXT, TEXT, TEXT, OK], 0)],
        &sink,
        &sessions,
    );
    let mut handle = a.stream(a.request("hi"));
    let _first = handle.next_event().await;
    let result = handle.result().await;
    assert_eq!(result.status, ExecutionStatus::Success);
    assert_eq!(sink.pushed().len(), 5);
    assert_eq!(sessions.lock().unwrap().len(), 1);
}
