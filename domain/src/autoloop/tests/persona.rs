use pretty_assertions::assert_eq;

use super::{base, config};
use crate::autoloop::persona::recommend_persona;

#[test]
fn persona_by_keywords() {
    let c = config(base());
    let check = |task: &str, want: &str| {
        assert_eq!(recommend_persona(&c.persona, task), want, "{task}");
    };
    check("Implement the parser", "engineer");
    check("Add a unit test for the parser", "tester");
    check("Update the README", "writer");
    check("TEST the cache", "tester");
    // Most hits wins: two tester keywords against one engineer keyword.
    check("fix coverage of the test suite", "tester");
    // Tie: the earlier-listed persona.
    check("fix the docs", "engineer");
    // Look-alikes that must not fire: keyword inside another word.
    check("show the latest contest results", "engineer");
    check("prefix the docstrings", "engineer");
    check("readmes everywhere", "engineer");
    // A multi-word keyword needs its words together.
    check("unit of test", "tester"); // via `test`, not `unit test`
    check("nothing matches here", "engineer");
    check("", "engineer");
}
