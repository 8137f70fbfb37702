//! The loop over a scripted provider: each stop reason, resume, emergency stop mid-run.

use std::sync::Arc;
use std::time::Duration;

use forge_app::AutoLoop;
use forge_domain::autoloop::{
    AutoConfig, LoopEventKind, LoopState, Outcome, Phase, RawAutoConfig, StopReason,
};
use forge_domain::{ExecutionResult, ExecutionStatus, ProviderId, RunId};
use forge_ports::RunRecord;
use forge_testkit::fakes::{FlagStop, MemoryLoopStore, ScriptStep, ScriptedRun, StoredRun};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::harness::{Harness, SESSION, harness};

fn config(extra: serde_json::Value) -> AutoConfig {
    let mut j = json!({
        "task": {"goal": "ship it"},
        "provider": {"name": "echo"},
        "safety": {"max_iterations": 5, "max_consecutive_errors": 2},
        "persona": {"default_persona": "engineer", "personas": [
            {"name": "engineer", "keywords": ["implement"]},
            {"name": "tester", "keywords": ["test"], "instructions": "Write tests."}
        ]},
        "research": {"enabled": true, "cache_minutes": 60}
    });
    if let (Some(base), Some(extra)) = (j.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            base.insert(k.clone(), v.clone());
        }
    }
    let raw: RawAutoConfig = serde_json::from_value(j).unwrap();
    AutoConfig::from_raw(raw, "auto.yaml", &["echo"]).unwrap()
}

/// A run answering `text` with `cost`.
fn answer(text: &str, cost: f64) -> ScriptedRun {
    let result = json!({"type": "result", "ok": true, "text": text, "cost_usd": cost});
    ScriptedRun::lines([SESSION.to_owned(), result.to_string()], 0)
}

fn plan(task: &str) -> ScriptedRun {
    answer(
        &json!({"next_task": task, "done": false, "reason": "next"}).to_string(),
        0.01,
    )
}

fn done() -> ScriptedRun {
    answer(
        r#"{"next_task": "", "done": true, "reason": "goal reached"}"#,
        0.01,
    )
}

fn failing_run() -> ScriptedRun {
    let result = json!({"type": "result", "ok": false, "text": "boom", "cost_usd": 0.02});
    ScriptedRun::lines([SESSION.to_owned(), result.to_string()], 1)
}

fn auto(h: &Harness, config: AutoConfig, store: &MemoryLoopStore, stop: &FlagStop) -> AutoLoop {
    AutoLoop::new(
        h.agent.clone(),
        config,
        "/ws".into(),
        Arc::new(store.clone()),
        Arc::new(stop.clone()),
    )
    .with_poll(Duration::from_millis(5))
}

fn kinds(store: &MemoryLoopStore) -> Vec<String> {
    store
        .events()
        .iter()
        .map(|e| {
            let v = serde_json::to_value(&e.kind).unwrap();
            v["event"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn three_iterations_then_done_completes_with_a_report() {
    let h = harness(vec![
        plan("implement the parser"),
        answer("parser done", 0.1),
        plan("write a test for the parser"),
        answer("test added", 0.2),
        plan("implement the printer"),
        answer("printer done", 0.3),
        done(),
    ]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let outcome = auto(&h, config(json!({})), &store, &stop)
        .run(false)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::Completed);
    let state = store.state().unwrap();
    assert_eq!(state.iteration, 4);
    assert!(
        close(state.total_cost_usd, 0.64),
        "{}",
        state.total_cost_usd
    );
    assert_eq!(outcome.report.totals.runs, 7);
    assert_eq!(
        outcome
            .report
            .persona_switches
            .iter()
            .map(|s| (s.iteration, s.to.as_str()))
            .collect::<Vec<_>>(),
        vec![(2, "tester"), (3, "engineer")]
    );
    // The tester's instructions went with iteration 2's executor prompt.
    let prompts: Vec<String> = h
        .runner
        .invocations()
        .iter()
        .map(|i| String::from_utf8_lossy(i.stdin.as_deref().unwrap_or_default()).into_owned())
        .collect();
    assert!(prompts[3].contains("Write tests."), "{}", prompts[3]);
    assert!(
        prompts[2].contains("iteration 1: implement the parser -> succeeded"),
        "{}",
        prompts[2]
    );
    assert_eq!(
        kinds(&store),
        [
            "iteration_started",
            "planned",
            "executed",
            "iteration_started",
            "planned",
            "persona_switched",
            "executed",
            "iteration_started",
            "planned",
            "persona_switched",
            "executed",
            "iteration_started",
            "planned",
            "stopped",
        ]
    );
    assert!(store.report().unwrap().1.contains("Stop reason: completed"));
}

#[tokio::test]
async fn malformed_planner_answers_stop_with_too_many_errors() {
    let h = harness(vec![
        answer("I would write tests next.", 0.01),
        answer(r#"{"next_task": "x"}"#, 0.01),
    ]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let outcome = auto(&h, config(json!({})), &store, &stop)
        .run(false)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::TooManyErrors);
    let state = store.state().unwrap();
    assert_eq!(state.iteration, 2);
    assert_eq!(state.total_errors, 2);
    assert!(
        matches!(&state.history[0].outcome, Outcome::PlannerError { reason } if reason.contains("no JSON object"))
    );
    assert!(
        matches!(&state.history[1].outcome, Outcome::PlannerError { reason } if reason.contains("lacks `done`"))
    );
}

#[tokio::test]
async fn failing_executions_stop_with_too_many_errors() {
    let h = harness(vec![
        plan("implement a"),
        failing_run(),
        plan("implement b"),
        failing_run(),
    ]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let outcome = auto(&h, config(json!({})), &store, &stop)
        .run(false)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::TooManyErrors);
    assert!(close(store.state().unwrap().total_cost_usd, 0.06));
}

#[tokio::test]
async fn max_iterations_and_cost_ceiling() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        runs.push(plan("implement more"));
        runs.push(answer("ok", 0.1));
    }
    let h = harness(runs.clone());
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let c = config(json!({"safety": {"max_iterations": 2}}));
    let outcome = auto(&h, c, &store, &stop).run(false).await.unwrap();
    assert_eq!(outcome.reason, StopReason::MaxIterations);
    assert_eq!(outcome.report.totals.iterations, 2);

    let h = harness(runs);
    let store = MemoryLoopStore::new();
    let c = config(json!({"safety": {"max_total_cost_usd": 0.1}}));
    let outcome = auto(&h, c, &store, &stop).run(false).await.unwrap();
    assert_eq!(outcome.reason, StopReason::CostCeiling);
    assert_eq!(outcome.report.totals.iterations, 1);
}

#[tokio::test]
async fn initial_prompt_skips_the_first_planner_run_and_research_is_cached() {
    let h = harness(vec![
        answer("set up", 0.1),
        plan("investigate the build"),
        answer("notes: use make", 0.05),
        answer("built", 0.1),
        plan("Investigate  the build?"),
        answer("built again", 0.1),
        done(),
    ]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let c = config(json!({"task": {"goal": "ship it", "initial_prompt": "set up the project"}}));
    let outcome = auto(&h, c, &store, &stop).run(false).await.unwrap();
    assert_eq!(outcome.reason, StopReason::Completed);
    assert_eq!(
        (outcome.report.research.hits, outcome.report.research.misses),
        (1, 1)
    );
    let args: Vec<String> = h
        .runner
        .invocations()
        .iter()
        .map(|i| String::from_utf8_lossy(i.stdin.as_deref().unwrap_or_default()).into_owned())
        .collect();
    assert!(args[0].contains("Task: set up the project"), "{}", args[0]);
    // Both executions got the research notes: the second from the cache.
    assert!(args[3].contains("notes: use make"), "{}", args[3]);
    assert!(args[5].contains("notes: use make"), "{}", args[5]);
}

#[tokio::test]
async fn emergency_stop_during_execution_cancels_the_run_and_resume_reruns_the_step() {
    let hang = ScriptedRun {
        steps: vec![ScriptStep::Line(SESSION.into()), ScriptStep::Hang],
        ..ScriptedRun::lines(Vec::<String>::new(), 0)
    };
    let h = harness(vec![
        plan("implement a"),
        answer("a", 0.1),
        plan("implement b"),
        hang,
    ]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    let runner = h.runner.clone();
    let flag = stop.clone();
    let watcher = tokio::spawn(async move {
        while runner.invocations().len() < 4 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        flag.set(true);
    });
    let outcome = auto(&h, config(json!({})), &store, &stop)
        .run(false)
        .await
        .unwrap();
    watcher.await.unwrap();
    assert_eq!(outcome.reason, StopReason::EmergencyStop);
    assert_eq!(
        outcome.report.stopped_during.as_deref(),
        Some("iteration 2, execute")
    );
    assert!(
        !h.runner.signals().is_empty(),
        "the hanging run was signalled"
    );

    // The file is removed; --resume re-runs iteration 2's execution, then goes on.
    stop.set(false);
    let h2 = harness(vec![answer("b", 0.2), done()]);
    let store2 = MemoryLoopStore::with_state(store.state().unwrap());
    let outcome = auto(&h2, config(json!({})), &store2, &stop)
        .run(true)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::Completed);
    let state = store2.state().unwrap();
    assert_eq!(state.iteration, 3);
    assert!(
        close(state.total_cost_usd, 0.01 + 0.1 + 0.01 + 0.2 + 0.01),
        "{}",
        state.total_cost_usd
    );
    assert!(kinds(&store2).contains(&"resumed".to_owned()));
}

/// A state saved while iteration 1's execution was running as `run-0009`.
fn crashed_state(c: &AutoConfig) -> LoopState {
    let mut s = LoopState::new(c, 1_700_000_000_000);
    s.start_iteration(1_700_000_000_001);
    s.planned(
        c,
        &forge_domain::autoloop::PlannerAnswer {
            next_task: "implement a".into(),
            done: false,
            reason: "r".into(),
            research: None,
        },
        None,
        1_700_000_000_002,
    );
    s.run_started(RunId::new("run-0009").unwrap());
    assert!(matches!(
        s.step.as_ref().unwrap().phase,
        Phase::Execute { .. }
    ));
    s
}

fn stored(result: Option<ExecutionResult>) -> StoredRun {
    let id = RunId::new("run-0009").unwrap();
    let provider = ProviderId::new("echo").unwrap();
    let h = harness(vec![]);
    let mut request = h.agent.request("x");
    request.provider = provider.clone();
    StoredRun {
        record: RunRecord {
            run_id: id,
            provider,
            workdir: "/ws".into(),
            home: None,
            started_at_ms: 0,
            finished_at_ms: None,
            session_id: None,
            status: None,
            pid: None,
        },
        request,
        events: Vec::new(),
        result,
    }
}

#[tokio::test]
async fn resume_adopts_a_run_that_finished_before_the_crash() {
    let c = config(json!({}));
    let h = harness(vec![done()]);
    let mut result =
        ExecutionResult::empty(ProviderId::new("echo").unwrap(), ExecutionStatus::Success);
    result.metadata.run_id = Some(RunId::new("run-0009").unwrap());
    result.metadata.cost_usd = Some(0.5);
    h.store.insert(stored(Some(result)));
    let store = MemoryLoopStore::with_state(crashed_state(&c));
    let outcome = auto(&h, c, &store, &FlagStop::default())
        .run(true)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::Completed);
    // Only the planner ran: the finished execution was not repeated, its cost counted once.
    assert_eq!(h.runner.invocations().len(), 1);
    assert!(close(store.state().unwrap().total_cost_usd, 0.51));
}

#[tokio::test]
async fn resume_reruns_a_step_whose_run_did_not_finish() {
    let c = config(json!({}));
    let h = harness(vec![answer("a", 0.3), done()]);
    h.store.insert(stored(None));
    let store = MemoryLoopStore::with_state(crashed_state(&c));
    let outcome = auto(&h, c, &store, &FlagStop::default())
        .run(true)
        .await
        .unwrap();
    assert_eq!(outcome.reason, StopReason::Completed);
    assert_eq!(h.runner.invocations().len(), 2);
    let state = store.state().unwrap();
    assert_eq!(state.iteration, 2);
    assert!(close(state.total_cost_usd, 0.31));
}

#[tokio::test]
async fn refusals_of_resume_and_overwrite() {
    let c = config(json!({}));
    let h = harness(vec![]);
    let err = auto(&h, c.clone(), &MemoryLoopStore::new(), &FlagStop::default())
        .run(true)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no saved loop"), "{err}");
    let store = MemoryLoopStore::with_state(crashed_state(&c));
    let err = auto(&h, c, &store, &FlagStop::default())
        .run(false)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("--resume"), "{err}");
}

#[tokio::test]
async fn the_state_is_saved_after_every_step() {
    let h = harness(vec![plan("implement a"), answer("a", 0.1), done()]);
    let (store, stop) = (MemoryLoopStore::new(), FlagStop::default());
    auto(&h, config(json!({})), &store, &stop)
        .run(false)
        .await
        .unwrap();
    // Steps: start, plan, execute, start, plan (done: stopped in the same save) = 5; plus
    // one save per run started (3) so a resume can find the run.
    assert_eq!(store.saves(), 8);
    let stopped: Vec<_> = store
        .events()
        .into_iter()
        .filter(|e| matches!(e.kind, LoopEventKind::Stopped { .. }))
        .collect();
    assert_eq!(stopped.len(), 1);
}
