//! `--help` of every subcommand: the documented interface, exit codes included.

use super::harness::Sandbox;

#[test]
fn help_of_every_subcommand() {
    let sandbox = Sandbox::new();
    let commands: &[&[&str]] = &[
        &[],
        &["run"],
        &["stream"],
        &["doctor"],
        &["runs"],
        &["runs", "list"],
        &["runs", "show"],
        &["events"],
        &["config"],
        &["config", "show"],
        &["completions"],
        &["demo"],
        &["fake-model"],
        &["fake-model", "serve"],
        &["task"],
        &["task", "run"],
        &["task", "gc"],
        &["serve"],
    ];
    for args in commands {
        let out = sandbox.forge().args(*args).arg("--help").assert().success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let name = if args.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{}", args.join("_"))
        };
        insta::with_settings!({filters => vec![(r"\d+\.\d+\.\d+", "[version]")]}, {
            insta::assert_snapshot!(name, text);
        });
    }
}

#[test]
fn version_is_printed() {
    Sandbox::new()
        .forge()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicates::str::starts_with("forge-code-agent "));
}

#[test]
fn completions_are_generated() {
    Sandbox::new()
        .forge()
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicates::str::contains("forge-code-agent"));
}
