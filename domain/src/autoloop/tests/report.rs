use super::{base, config};
use crate::RunId;
use crate::autoloop::config::AutoConfig;
use crate::autoloop::decide::StopReason;
use crate::autoloop::planner::PlannerAnswer;
use crate::autoloop::prompts::{executor_prompt, planning_prompt};
use crate::autoloop::report::{LoopReport, render_markdown};
use crate::autoloop::state::{LoopState, RunRef, RunRole};

const T0: u64 = 1_700_000_000_000;

fn run(role: RunRole, n: u32, cost: f64, status: &str) -> RunRef {
    RunRef {
        role,
        run_id: Some(RunId::new(format!("01900000-0000-7000-8000-00000000000{n}")).unwrap()),
        status: status.into(),
        cost_usd: cost,
        duration_ms: 1500,
    }
}

fn plan(task: &str, done: bool) -> PlannerAnswer {
    PlannerAnswer {
        next_task: task.into(),
        done,
        reason: format!("because {task}"),
        research: None,
    }
}

/// Four iterations: a success, a research miss, a failed execution, a research hit, then done.
fn scripted(c: &AutoConfig) -> LoopState {
    let mut s = LoopState::new(c, T0);
    let mut t = T0;
    let mut tick = |ms: u64| {
        t += ms;
        t
    };
    s.start_iteration(tick(0));
    s.planned(
        c,
        &plan("implement the parser", false),
        Some(run(RunRole::Planner, 1, 0.01, "success")),
        tick(2000),
    );
    s.executed(
        run(RunRole::Executor, 2, 0.1, "success"),
        None,
        tick(30_000),
    );
    s.start_iteration(tick(10));
    s.planned(
        c,
        &plan("investigate parser test coverage", false),
        Some(run(RunRole::Planner, 3, 0.01, "success")),
        tick(2000),
    );
    s.researched(
        c,
        "investigate parser test coverage",
        Some("use cargo llvm-cov".into()),
        run(RunRole::Researcher, 4, 0.02, "success"),
        tick(5000),
    );
    s.executed(
        run(RunRole::Executor, 5, 0.2, "error"),
        Some("the CLI exited with 1".into()),
        tick(40_000),
    );
    s.start_iteration(tick(10));
    s.planned(
        c,
        &plan("Investigate parser test coverage?", false),
        Some(run(RunRole::Planner, 6, 0.01, "success")),
        tick(2000),
    );
    assert!(
        s.research_from_cache(c, "Investigate parser test coverage?", tick(10))
            .is_some()
    );
    s.executed(
        run(RunRole::Executor, 7, 0.3, "success"),
        None,
        tick(20_000),
    );
    s.start_iteration(tick(10));
    s.planned(
        c,
        &plan("", true),
        Some(run(RunRole::Planner, 8, 0.01, "success")),
        tick(1000),
    );
    s
}

#[test]
fn report_json_and_markdown() {
    let c = config(base());
    let s = scripted(&c);
    assert_eq!(
        s.stopped.as_ref().map(|x| x.reason),
        Some(StopReason::Completed)
    );
    let report = LoopReport::from_state(&s, "claude");
    insta::assert_json_snapshot!("report_json", report);
    insta::assert_snapshot!("report_md", render_markdown(&report));
}

#[test]
fn report_of_a_loop_stopped_mid_step() {
    let c = config(base());
    let mut s = LoopState::new(&c, T0);
    s.start_iteration(T0);
    s.planned(
        &c,
        &plan("write the | pipe docs\nnow", false),
        Some(run(RunRole::Planner, 1, 0.01, "success")),
        T0 + 10,
    );
    s.interrupted(run(RunRole::Executor, 2, 0.05, "partial"));
    s.stop(StopReason::EmergencyStop, T0 + 900);
    insta::assert_snapshot!(
        "report_md_emergency",
        render_markdown(&LoopReport::from_state(&s, "codex"))
    );
}

#[test]
fn prompts() {
    let c = config(base());
    let mut s = scripted(&c);
    s.stopped = None;
    s.start_iteration(T0);
    insta::assert_snapshot!("planning_prompt", planning_prompt(&c, &s));
    let with_map = crate::autoloop::planning_prompt_with_map(
        &c,
        &s,
        Some(Ok(
            "1 files; most relevant to the task first\nsrc/lib.rs\n  1: pub fn add(a: i32, b: i32) -> i32\n",
        )),
    );
    insta::assert_snapshot!("planning_prompt_with_map", with_map);
    let unavailable =
        crate::autoloop::planning_prompt_with_map(&c, &s, Some(Err("not a directory")));
    assert!(unavailable.contains("Repository map: unavailable (not a directory)."));
    insta::assert_snapshot!(
        "executor_prompt",
        executor_prompt(&c, "add a unit test", "tester", Some("use cargo llvm-cov"))
    );
}
