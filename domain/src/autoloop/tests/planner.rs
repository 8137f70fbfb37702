use pretty_assertions::assert_eq;

use crate::autoloop::planner::{PlannerAnswer, PlannerAnswerError as E, parse_planner_answer};

fn answer(task: &str, done: bool, reason: &str, research: Option<&str>) -> PlannerAnswer {
    PlannerAnswer {
        next_task: task.into(),
        done,
        reason: reason.into(),
        research: research.map(Into::into),
    }
}

#[test]
fn planner_answers() {
    let ok = |t: &str, d, r| Ok(answer(t, d, r, None));
    let cases: Vec<(&str, Result<PlannerAnswer, E>)> = vec![
        (
            r#"{"next_task": "write tests", "done": false, "reason": "none yet"}"#,
            ok("write tests", false, "none yet"),
        ),
        (
            "```json\n{\"next_task\": \"a\", \"done\": false, \"reason\": \"b\"}\n```",
            ok("a", false, "b"),
        ),
        (
            "Here is my plan:\n{\"next_task\": \"a\", \"done\": false, \"reason\": \"b\"}\nGood luck.",
            ok("a", false, "b"),
        ),
        (
            r#"{"done": true, "reason": "all green"}"#,
            ok("", true, "all green"),
        ),
        (
            r#"{"next_task": "", "done": true, "reason": "all green"}"#,
            ok("", true, "all green"),
        ),
        (
            r#"{"next_task": " a ", "done": false, "reason": "b", "extra": 1}"#,
            ok("a", false, "b"),
        ),
        (
            r#"{"next_task": "a", "done": false, "reason": "b", "research": "which crate?"}"#,
            Ok(answer("a", false, "b", Some("which crate?"))),
        ),
        (
            r#"{"next_task": "a", "done": false, "reason": "b", "research": ""}"#,
            ok("a", false, "b"),
        ),
        // Refused.
        ("I think we should write tests next.", Err(E::NoJson)),
        ("", Err(E::NoJson)),
        ("} oops {", Err(E::NoJson)),
        (
            r#"{"next_task": "a", "done": false, "reason": }"#,
            Err(E::BadJson("expected value at line 1 column 45".into())),
        ),
        ("[1, 2]", Err(E::NoJson)),
        (
            r#"{"next_task": "a", "reason": "b"}"#,
            Err(E::Missing("done")),
        ),
        (
            r#"{"next_task": "a", "done": "no", "reason": "b"}"#,
            Err(E::WrongType {
                key: "done",
                expected: "true or false",
            }),
        ),
        (
            r#"{"done": false, "reason": "b"}"#,
            Err(E::Missing("next_task")),
        ),
        (
            r#"{"next_task": "  ", "done": false, "reason": "b"}"#,
            Err(E::EmptyTask),
        ),
        (
            r#"{"next_task": 3, "done": false, "reason": "b"}"#,
            Err(E::WrongType {
                key: "next_task",
                expected: "a string",
            }),
        ),
        (
            r#"{"next_task": "a", "done": false}"#,
            Err(E::Missing("reason")),
        ),
        (
            r#"{"next_task": "a", "done": false, "reason": "b", "research": 5}"#,
            Err(E::WrongType {
                key: "research",
                expected: "a string",
            }),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_planner_answer(text), want, "{text}");
    }
}
