//! `--help` of every subcommand: the documented interface, exit codes included.

use super::harness::Sandbox;

#[test]
fn help_of_every_subcommand() {
    let sandbox = Sandbox::new();
    // Walked from the clap tree, so a new subcommand gets its snapshot without a list to
    // keep up to date.
    let commands = subcommand_paths(&<forge_cli::Cli as clap::CommandFactory>::command());
    for args in &commands {
        let out = sandbox.forge().args(args).arg("--help").assert().success();
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

/// Every subcommand path below `command` (the root as the empty path), `help` excluded.
fn subcommand_paths(command: &clap::Command) -> Vec<Vec<String>> {
    let mut paths = vec![Vec::new()];
    // Hidden subcommands (`__sandbox-bridge`, forge's own) are no documented interface.
    for sub in command
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
    {
        for rest in subcommand_paths(sub) {
            let mut path = vec![sub.get_name().to_owned()];
            path.extend(rest);
            paths.push(path);
        }
    }
    paths
}

#[test]
fn the_sandbox_bridge_is_hidden_and_runs_its_command() {
    let sandbox = Sandbox::new();
    let help = sandbox.forge().arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    assert!(!help.contains("sandbox-bridge"), "{help}");
    // The command's exit code is the bridge's; 125 when the bridge cannot start.
    for (spec, script, code) in [
        (r#"{"listen":[]}"#, "exit 4", 4),
        ("not json", "exit 0", 125),
    ] {
        sandbox
            .forge()
            .args(["__sandbox-bridge", "--spec", spec, "--", "sh", "-c", script])
            .assert()
            .code(code);
    }
}
