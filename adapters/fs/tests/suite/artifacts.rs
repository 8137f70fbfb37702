//! Writing one run bundle: files, contents, redaction.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use forge_adapter_fs::{BUNDLE_FILES, FsArtifactStore};
use forge_domain::{
    AgentEvent, CostSource, ExecutionRequest, ExecutionResult, ExecutionStatus, ForgeError,
    ProviderId, RawJson, Redactor, RunId, SessionId, Usage,
};
use forge_ports::{ArtifactStore, RunRecord};

pub(crate) const SECRET: &str = "sk-test-0123456789abcdef";

pub(crate) fn provider() -> ProviderId {
    ProviderId::new("claude").unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

pub(crate) fn record(workdir: &Path, run_id: &str, started_at_ms: u64) -> RunRecord {
    RunRecord {
        run_id: RunId::new(run_id).unwrap(),
        provider: provider(),
        workdir: workdir.to_path_buf(),
        home: None,
        started_at_ms,
        finished_at_ms: None,
        session_id: None,
        status: None,
        pid: Some(4242),
    }
}

pub(crate) fn request(workdir: &Path) -> ExecutionRequest {
    let mut req = ExecutionRequest::new(provider(), "fix the bug", workdir);
    req.env.insert("ANTHROPIC_API_KEY".into(), SECRET.into());
    req.timeout_ms = Some(60_000);
    req
}

pub(crate) fn events() -> Vec<AgentEvent> {
    events_with_key(SECRET)
}

/// [`events`] as they read back: the secret masked. (The raw object's keys are already in
/// sorted order, because `RawJson` reads back through `serde_json::Value`.)
pub(crate) fn redacted_events() -> Vec<AgentEvent> {
    events_with_key("[REDACTED]")
}

fn events_with_key(key: &str) -> Vec<AgentEvent> {
    vec![
        AgentEvent::SessionStarted {
            session_id: SessionId::new("sess-1").unwrap(),
            model: Some("sonnet".into()),
            cwd: None,
            cli_version: None,
            tools: vec![],
        },
        AgentEvent::Text {
            text: format!("the key is {key}").into(),
            delta: false,
        },
        AgentEvent::Unknown {
            kind: "future_kind".into(),
            raw: RawJson::from_line(r#"{"n":1,"type":"future_kind"}"#),
        },
    ]
}

pub(crate) fn result(session: &str, duration_ms: u64, cost: f64) -> ExecutionResult {
    let mut result = ExecutionResult::empty(provider(), ExecutionStatus::Success);
    result.content = format!("done, key {SECRET}");
    result.raw_events = vec![RawJson::from_line(r#"{"type":"result"}"#)];
    result.metadata.session_id = Some(SessionId::new(session).unwrap());
    result.metadata.duration_ms = Some(duration_ms);
    result.metadata.cost_usd = Some(cost);
    result.metadata.cost_source = Some(CostSource::Reported);
    result.metadata.usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        ..Usage::default()
    };
    result
}

pub(crate) fn store() -> FsArtifactStore {
    FsArtifactStore::new(Redactor::new().with_secret_env([("ANTHROPIC_API_KEY", SECRET)]))
}

fn file_list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_no_secret(dir: &Path) {
    for name in file_list(dir) {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        assert!(!text.contains(SECRET), "{name} leaks the secret");
    }
}

#[tokio::test]
async fn a_finished_bundle_is_complete_redacted_and_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let workdir = tmp.path();
    let run_id = format!("run-{}", now_ms());
    let mut rec = record(workdir, &run_id, now_ms());
    let store = store();

    let mut run = store.create_run(&rec, &request(workdir)).await.unwrap();
    let dir = run.dir().to_path_buf();
    assert_eq!(dir, workdir.join(".forgecode/runs").join(&run_id));
    assert_eq!(run.stdout_log(), dir.join("stdout.log"));
    assert_eq!(run.stderr_log(), dir.join("stderr.log"));
    run.append_events(&events()).await.unwrap();

    rec.finished_at_ms = Some(rec.started_at_ms + 1234);
    rec.status = Some(ExecutionStatus::Success);
    rec.session_id = Some(SessionId::new("sess-1").unwrap());
    let mut res = result("sess-1", 1234, 0.25);
    res.metadata.run_id = Some(rec.run_id.clone());
    run.finish(&rec, &res).await.unwrap();

    insta::assert_yaml_snapshot!("finished_file_list", file_list(&dir));
    let mut want: Vec<&str> = BUNDLE_FILES.to_vec();
    want.sort_unstable();
    assert_eq!(file_list(&dir), want);
    assert_no_secret(&dir);

    let json = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    insta::assert_json_snapshot!("finished_result_json", json("result.json"), {
        ".metadata.run_id" => "[run_id]",
    });
    insta::assert_json_snapshot!("finished_run_json", json("run.json"), {
        ".run_id" => "[run_id]",
        ".workdir" => "[workdir]",
        ".started_at_ms" => "[ms]",
        ".finished_at_ms" => "[ms]",
    });
    insta::assert_json_snapshot!("finished_request_json", json("request.json"), {
        ".workdir" => "[workdir]",
    });
    insta::assert_snapshot!(
        "finished_events_jsonl",
        std::fs::read_to_string(dir.join("events.jsonl")).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(workdir.join(".forgecode/.gitignore")).unwrap(),
        "*\n"
    );
}

#[tokio::test]
async fn an_unfinished_bundle_has_everything_but_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record(tmp.path(), "crashed", now_ms());
    let store = store();
    let run = store.create_run(&rec, &request(tmp.path())).await.unwrap();
    let dir = run.dir().to_path_buf();
    // forge dies here: the handle is dropped without `finish`.
    drop(run);
    insta::assert_yaml_snapshot!("unfinished_file_list", file_list(&dir));
    assert_eq!(
        store.load_result(tmp.path(), &rec.run_id).await.unwrap(),
        None
    );
    assert_no_secret(&dir);
}

#[tokio::test]
async fn appended_events_read_back_in_order_across_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record(tmp.path(), "events", 1);
    let store = FsArtifactStore::default();
    let mut run = store.create_run(&rec, &request(tmp.path())).await.unwrap();
    let (all, want) = (events(), redacted_events());
    run.append_events(&all[..1]).await.unwrap();
    // Flushed per call: visible before finish, while the handle is still open.
    assert_eq!(
        store.load_events(tmp.path(), &rec.run_id).await.unwrap(),
        want[..1].to_vec()
    );
    run.append_events(&all[1..]).await.unwrap();
    run.append_events(&[]).await.unwrap();
    assert_eq!(
        store.load_events(tmp.path(), &rec.run_id).await.unwrap(),
        want
    );
}

#[tokio::test]
async fn bad_run_ids_and_duplicates_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store();
    for bad in ["..", "."] {
        let got = store
            .create_run(&record(tmp.path(), bad, 1), &request(tmp.path()))
            .await;
        assert!(
            matches!(got, Err(ForgeError::InvalidRequest { .. })),
            "{bad}"
        );
    }
    let rec = record(tmp.path(), "twice", 1);
    store.create_run(&rec, &request(tmp.path())).await.unwrap();
    let again = store.create_run(&rec, &request(tmp.path())).await;
    assert!(matches!(again, Err(ForgeError::InvalidRequest { .. })));

    let unknown = RunId::new("nope").unwrap();
    assert!(matches!(
        store.load_result(tmp.path(), &unknown).await,
        Err(ForgeError::InvalidRequest { .. })
    ));
    assert!(matches!(
        store.load_events(tmp.path(), &unknown).await,
        Err(ForgeError::InvalidRequest { .. })
    ));
}

/// A bundle moved out of a work tree that is about to go: whole, under its id; a run with no
/// bundle there is skipped; an id that would name another directory is refused.
#[tokio::test]
async fn kept_runs_move_out_whole_and_missing_ones_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let rec = record(&tree, "r-1", now_ms());
    let store = store();
    let run = store.create_run(&rec, &request(&tree)).await.unwrap();
    let before = file_list(run.dir());
    drop(run);
    let dest = tmp.path().join("reviews/runs");
    let kept = store
        .keep_runs(
            &tree,
            &[rec.run_id.clone(), RunId::new("never-ran").unwrap()],
            &dest,
        )
        .await
        .unwrap();
    assert_eq!(kept, vec![dest.join("r-1")]);
    assert_eq!(file_list(&dest.join("r-1")), before);
    assert!(!tree.join(".forgecode/runs/r-1").exists());
    let refused = store
        .keep_runs(&tree, &[RunId::new("..").unwrap()], &dest)
        .await;
    assert!(
        matches!(refused, Err(ForgeError::InvalidRequest { .. })),
        "{refused:?}"
    );
}
