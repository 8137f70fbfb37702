use pretty_assertions::assert_eq;
use serde_json::json;

use super::{base, config};
use crate::autoloop::config::AutoConfig;
use crate::autoloop::decide::{Next, StopReason, decide};
use crate::autoloop::planner::PlannerAnswer;
use crate::autoloop::state::{LoopState, RunRef, RunRole};

const T0: u64 = 1_000_000;
const HOUR: u64 = 3_600_000;

fn run(role: RunRole, cost: f64) -> RunRef {
    RunRef {
        role,
        run_id: None,
        status: "success".into(),
        cost_usd: cost,
        duration_ms: 10,
    }
}

fn plan(task: &str) -> PlannerAnswer {
    PlannerAnswer {
        next_task: task.into(),
        done: false,
        reason: "r".into(),
        research: None,
    }
}

/// One full successful iteration costing `cost`.
fn succeed(s: &mut LoopState, c: &AutoConfig, cost: f64) {
    s.start_iteration(T0);
    s.planned(c, &plan("fix it"), Some(run(RunRole::Planner, 0.0)), T0);
    s.executed(run(RunRole::Executor, cost), None, T0);
}

fn fail_plan(s: &mut LoopState) {
    s.start_iteration(T0);
    s.planner_failed("bad json".into(), Some(run(RunRole::Planner, 0.01)), T0);
}

type Setup = fn(&mut LoopState, &AutoConfig);

fn check(name: &str, cfg: &AutoConfig, setup: Setup, now: u64, stop_file: bool, want: Next) {
    let mut s = LoopState::new(cfg, T0);
    setup(&mut s, cfg);
    assert_eq!(decide(&s, cfg, now, stop_file), want, "{name}");
}

#[test]
fn each_stop_reason_and_step() {
    let c = config(base());
    let cases: Vec<(&str, Setup, u64, bool, Next)> = vec![
        (
            "fresh loop starts",
            |_, _| {},
            T0,
            false,
            Next::StartIteration,
        ),
        (
            "planning step",
            |s, _| {
                s.start_iteration(T0);
            },
            T0,
            false,
            Next::Plan,
        ),
        (
            "stop file wins over everything",
            |s, _| {
                s.start_iteration(T0);
            },
            T0,
            true,
            Next::Stop(StopReason::EmergencyStop),
        ),
        (
            "stop file between iterations",
            |_, _| {},
            T0,
            true,
            Next::Stop(StopReason::EmergencyStop),
        ),
        (
            "duration reached",
            |_, _| {},
            T0 + HOUR,
            false,
            Next::Stop(StopReason::Timeout),
        ),
        (
            "duration just short",
            |_, _| {},
            T0 + HOUR - 1,
            false,
            Next::StartIteration,
        ),
        (
            "duration reached mid-iteration",
            |s, _| {
                s.start_iteration(T0);
            },
            T0 + HOUR,
            false,
            Next::Stop(StopReason::Timeout),
        ),
        (
            "cost ceiling reached",
            |s, c| succeed(s, c, 1.0),
            T0,
            false,
            Next::Stop(StopReason::CostCeiling),
        ),
        (
            "cost just under the ceiling",
            |s, c| succeed(s, c, 0.99),
            T0,
            false,
            Next::StartIteration,
        ),
        (
            "execute after planning",
            |s, c| {
                s.start_iteration(T0);
                s.planned(c, &plan("fix the bug"), None, T0);
            },
            T0,
            false,
            Next::Execute,
        ),
        (
            "research by keyword",
            |s, c| {
                s.start_iteration(T0);
                s.planned(c, &plan("investigate the flaky test"), None, T0);
            },
            T0,
            false,
            Next::Research("investigate the flaky test".into()),
        ),
        (
            "research asked by the planner",
            |s, c| {
                s.start_iteration(T0);
                let mut a = plan("fix it");
                a.research = Some("which serde version?".into());
                s.planned(c, &a, None, T0);
            },
            T0,
            false,
            Next::Research("which serde version?".into()),
        ),
        (
            "two planner errors in a row",
            |s, _| {
                fail_plan(s);
                fail_plan(s);
            },
            T0,
            false,
            Next::Stop(StopReason::TooManyErrors),
        ),
        (
            "one error is not enough",
            |s, _| fail_plan(s),
            T0,
            false,
            Next::StartIteration,
        ),
        (
            "a success resets the count (else too_many_errors)",
            |s, c| {
                fail_plan(s);
                succeed(s, c, 0.0);
                fail_plan(s);
            },
            T0,
            false,
            Next::Stop(StopReason::MaxIterations),
        ),
        (
            "executor failures count too",
            |s, c| {
                for _ in 0..2 {
                    s.start_iteration(T0);
                    s.planned(c, &plan("fix"), None, T0);
                    s.executed(run(RunRole::Executor, 0.0), Some("exit 1".into()), T0);
                }
            },
            T0,
            false,
            Next::Stop(StopReason::TooManyErrors),
        ),
        (
            "max iterations",
            |s, c| {
                for _ in 0..3 {
                    succeed(s, c, 0.0);
                }
            },
            T0,
            false,
            Next::Stop(StopReason::MaxIterations),
        ),
        (
            "done stops completed",
            |s, c| {
                s.start_iteration(T0);
                let mut a = plan("");
                a.done = true;
                s.planned(c, &a, None, T0);
            },
            T0,
            false,
            Next::Stopped(StopReason::Completed),
        ),
        (
            "a recorded stop stays",
            |s, _| {
                s.stop(StopReason::Timeout, T0);
            },
            T0,
            false,
            Next::Stopped(StopReason::Timeout),
        ),
    ];
    for (name, setup, now, stop_file, want) in cases {
        check(name, &c, setup, now, stop_file, want);
    }
}

#[test]
fn initial_prompt_replaces_the_first_plan_only() {
    let mut j = base();
    j["task"]["initial_prompt"] = json!("set up the project");
    let c = config(j);
    check(
        "iteration 1",
        &c,
        |s, _| {
            s.start_iteration(T0);
        },
        T0,
        false,
        Next::UseInitialPrompt("set up the project".into()),
    );
    check(
        "iteration 2",
        &c,
        |s, c| {
            succeed(s, c, 0.0);
            s.start_iteration(T0);
        },
        T0,
        false,
        Next::Plan,
    );
}

#[test]
fn research_off_goes_straight_to_execution() {
    let mut j = base();
    j["research"]["enabled"] = json!(false);
    let c = config(j);
    check(
        "keyword ignored",
        &c,
        |s, c| {
            s.start_iteration(T0);
            s.planned(c, &plan("investigate it"), None, T0);
        },
        T0,
        false,
        Next::Execute,
    );
}

#[test]
fn emergency_stop_is_lifted_by_resume_and_the_step_runs_again() {
    let c = config(base());
    let mut s = LoopState::new(&c, T0);
    s.start_iteration(T0);
    s.planned(&c, &plan("fix it"), Some(run(RunRole::Planner, 0.1)), T0);
    s.interrupted(run(RunRole::Executor, 0.2));
    s.stop(StopReason::EmergencyStop, T0 + 5);
    assert_eq!(
        s.stopped.as_ref().unwrap().during.as_deref(),
        Some("iteration 1, execute")
    );
    assert_eq!(
        decide(&s, &c, T0, false),
        Next::Stopped(StopReason::EmergencyStop)
    );
    s.resume(T0 + 10);
    assert_eq!(decide(&s, &c, T0 + 10, false), Next::Execute);
    // The cut-short run's cost is counted once, and kept.
    assert!((s.total_cost_usd - 0.3).abs() < 1e-9);
    // Other stops are not lifted.
    s.stop(StopReason::MaxIterations, T0 + 20);
    s.resume(T0 + 30);
    assert_eq!(
        decide(&s, &c, T0 + 30, false),
        Next::Stopped(StopReason::MaxIterations)
    );
}

#[test]
fn state_round_trips_through_json() {
    let c = config(base());
    let mut s = LoopState::new(&c, T0);
    succeed(&mut s, &c, 0.25);
    s.start_iteration(T0 + 1);
    s.planned(&c, &plan("investigate coverage"), None, T0 + 2);
    s.run_started(crate::RunId::new("01900000-0000-7000-8000-000000000000").unwrap());
    let text = serde_json::to_string(&s).unwrap();
    let back: LoopState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}
