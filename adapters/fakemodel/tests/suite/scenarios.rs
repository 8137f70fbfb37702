//! Scenario files: every builtin parses, the documented format round-trips, bad files fail.

use forge_adapter_fakemodel::{FailKnob, Scenario, Times, ToolAction, Turn};

#[test]
fn every_builtin_parses_and_is_listed() {
    let names = Scenario::builtin_names();
    assert!(names.len() >= 9, "{names:?}");
    for name in names {
        let scenario = Scenario::builtin(name).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(&scenario.name, name);
        assert!(
            !scenario.prompts.is_empty(),
            "{name} has no prompt for harnesses"
        );
    }
    let resume = Scenario::builtin("resume").unwrap();
    assert_eq!(resume.prompts.len(), 2);
    assert_eq!(resume.turns.len(), 2);
}

#[test]
fn unknown_builtin_names_the_known_ones() {
    let err = Scenario::builtin("nope").unwrap_err().to_string();
    assert!(
        err.contains("nope") && err.contains("plain_answer"),
        "{err}"
    );
}

#[test]
fn the_documented_toml_example_parses() {
    let text = r#"
name = "write_file"
[[turns]]
text = "I'll create the file."
tool_calls = [{ action = "write_file", path = "hello.txt", content = "hi\n" }]
[[turns]]
text = "Created hello.txt."
chunks = 3
chunk_delay_ms = 5
fail = { status = 429, times = 1 }
[[turns]]
text = "never"
fail = { status = 500, times = "always" }
cut_after_events = 2
"#;
    let scenario = Scenario::from_toml_str(text).unwrap();
    assert_eq!(
        scenario.turns[0].tool_calls,
        [ToolAction::WriteFile {
            path: "hello.txt".into(),
            content: "hi\n".into()
        }]
    );
    assert_eq!(scenario.turns[1].chunks, Some(3));
    assert_eq!(scenario.turns[1].chunk_delay_ms, 5);
    assert_eq!(
        scenario.turns[1].fail,
        Some(FailKnob {
            status: 429,
            times: Times::Count(1),
            message: None,
            in_stream: false,
            retry_delay: None,
            retry_info: true,
        })
    );
    assert!(matches!(
        scenario.turns[2].fail.as_ref().unwrap().times,
        Times::Always(_)
    ));
    assert_eq!(scenario.turns[2].cut_after_events, Some(2));
}

#[test]
fn json_is_the_same_format() {
    let toml = Scenario::builtin("write_read_shell").unwrap();
    let json = serde_json::to_string(&toml).unwrap();
    assert_eq!(Scenario::from_json_str(&json).unwrap(), toml);
}

#[test]
fn from_path_picks_the_format_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let toml_path = dir.path().join("s.toml");
    std::fs::write(&toml_path, "name = \"t\"\n[[turns]]\ntext = \"x\"\n").unwrap();
    assert_eq!(Scenario::from_path(&toml_path).unwrap().name, "t");
    let json_path = dir.path().join("s.json");
    std::fs::write(&json_path, r#"{"name":"j","turns":[{"text":"x"}]}"#).unwrap();
    assert_eq!(Scenario::from_path(&json_path).unwrap().name, "j");
    let missing = Scenario::from_path(&dir.path().join("missing.toml")).unwrap_err();
    assert!(missing.to_string().contains("missing.toml"), "{missing}");
}

/// Invalid scenarios are rejected with a message naming the problem.
fn check_invalid(toml: &str, expected_fragment: &str) {
    let err = Scenario::from_toml_str(toml).unwrap_err().to_string();
    assert!(
        err.contains(expected_fragment),
        "{err:?} lacks {expected_fragment:?}"
    );
}

#[test]
fn invalid_scenarios_say_why() {
    check_invalid("name = \"x\"\nturns = []\n", "at least one turn");
    check_invalid(
        "name = \"x\"\n[[turns]]\nchunks = 2\n",
        "neither text nor tool_calls",
    );
    check_invalid(
        "name = \"x\"\n[[turns]]\ntext = \"a\"\nchunks = 0\n",
        "chunks must be at least 1",
    );
    check_invalid(
        "name = \"x\"\n[[turns]]\ntext = \"a\"\nfail = { status = 200 }\n",
        "not an HTTP error",
    );
    for delay in ["1", "soon", "-1s", ""] {
        check_invalid(
            &format!(
                "name = \"x\"\n[[turns]]\ntext = \"a\"\nfail = {{ status = 429, retry_delay = \"{delay}\" }}\n"
            ),
            "is not a duration",
        );
    }
    check_invalid(
        "name = \"x\"\n[[turns]]\ntext = \"a\"\nbogus = 1\n",
        "bogus",
    );
    check_invalid(
        "name = \"x\"\n[[turns]]\ntool_calls = [{ action = \"teleport\" }]\n",
        "teleport",
    );
    check_invalid(
        "name = \"x\"\n[[turns]]\ntext = \"a\"\nfail = { status = 500, times = \"often\" }\n",
        "",
    );
}

#[test]
fn text_is_split_into_the_requested_chunks() {
    let turn = |text: &str, chunks| Turn {
        text: Some(text.into()),
        chunks,
        ..Turn::default()
    };
    assert_eq!(turn("abcdef", Some(3)).text_chunks(), ["ab", "cd", "ef"]);
    assert_eq!(turn("abcdefg", Some(3)).text_chunks(), ["abc", "def", "g"]);
    assert_eq!(turn("ab", Some(5)).text_chunks(), ["a", "b"]);
    assert_eq!(turn("héllo", None).text_chunks(), ["héllo"]);
    assert_eq!(turn("", Some(2)).text_chunks(), Vec::<String>::new());
}
