//! Reading bundles back: listing order, broken bundles, sessions, damaged event logs.

use std::io::Write;

use forge_domain::{RunId, SessionId};
use forge_ports::ArtifactStore;

use super::artifacts::{record, request, result, store};

#[tokio::test]
async fn runs_are_listed_newest_first_and_broken_bundles_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store();
    // (run id, started_at_ms, finished with (session, duration, cost))
    let runs = [
        ("a-old", 100, Some(("s-old", 10, 0.1))),
        ("b-new", 300, None),
        ("c-tie", 200, Some(("s-tie", 20, 0.2))),
        ("d-tie", 200, Some(("s-shared", 30, 0.3))),
        ("e-newest-same-session", 400, Some(("s-shared", 40, 0.4))),
    ];
    for (id, started, finished) in runs {
        let mut rec = record(tmp.path(), id, started);
        let mut run = store.create_run(&rec, &request(tmp.path())).await.unwrap();
        if let Some((session, duration, cost)) = finished {
            rec.finished_at_ms = Some(started + duration);
            run.finish(&rec, &result(session, duration, cost))
                .await
                .unwrap();
        }
    }
    let runs_dir = tmp.path().join(".forgecode/runs");
    std::fs::create_dir(runs_dir.join("z-broken")).unwrap();
    std::fs::write(runs_dir.join("z-broken/run.json"), "{not json").unwrap();
    std::fs::write(runs_dir.join("stray-file"), "x").unwrap();

    let listed = store.list_runs(tmp.path()).await.unwrap();
    let rows: Vec<_> = listed
        .iter()
        .map(|s| {
            (
                s.record.run_id.to_string(),
                s.record.started_at_ms,
                s.duration_ms,
                s.cost_usd,
                s.has_result,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "e-newest-same-session".into(),
                400,
                Some(40),
                Some(0.4),
                true
            ),
            ("b-new".into(), 300, None, None, false),
            ("d-tie".into(), 200, Some(30), Some(0.3), true),
            ("c-tie".into(), 200, Some(20), Some(0.2), true),
            ("a-old".into(), 100, Some(10), Some(0.1), true),
        ]
    );

    let session = |s: &str| SessionId::new(s).unwrap();
    let found = store
        .find_session(tmp.path(), &session("s-shared"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.run_id.as_str(), "e-newest-same-session");
    assert_eq!(found.session_id, Some(session("s-shared")));
    let found = store
        .find_session(tmp.path(), &session("s-old"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.run_id.as_str(), "a-old");
    assert_eq!(
        store
            .find_session(tmp.path(), &session("s-none"))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn no_runs_directory_means_no_runs() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(store().list_runs(tmp.path()).await.unwrap().is_empty());
}

#[tokio::test]
async fn unparsable_event_lines_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store();
    let rec = record(tmp.path(), "torn", 1);
    let mut run = store.create_run(&rec, &request(tmp.path())).await.unwrap();
    let events = super::artifacts::events();
    run.append_events(&events[..2]).await.unwrap();
    let path = run.dir().join("events.jsonl");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    // A line from a newer forge, a blank line and a write torn by a crash.
    file.write_all(b"{\"type\":\"from_the_future\"}\n\n{\"type\":\"text\",\"te")
        .unwrap();
    let loaded = store
        .load_events(tmp.path(), &RunId::new("torn").unwrap())
        .await
        .unwrap();
    assert_eq!(loaded, super::artifacts::redacted_events()[..2].to_vec());
}
