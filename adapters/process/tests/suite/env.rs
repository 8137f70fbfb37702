//! What the child is started with: program lookup, environment, cwd, prepared files; and
//! `output` for short commands.

use std::path::Path;
use std::time::Duration;

use forge_adapter_process::TokioProcessRunner;
use forge_domain::ForgeError;
use forge_ports::{FileSource, Invocation, PreparedFile, ProcessRunner, SpawnOptions};

use super::support::{all_items, fake, fake_cli, quick_options, start, texts};

async fn first_json(invocation: Invocation) -> serde_json::Value {
    let mut child = start(invocation, quick_options()).await;
    let items = all_items(&mut child).await;
    serde_json::from_str(&texts(&items)[0]).unwrap()
}

#[tokio::test]
async fn the_environment_is_inherited_or_cleared_then_removed_then_set() {
    let names = "PATH,HOME,FORGE_SET";
    let mut inherit = fake(&[("FAKE_PRINT_ENV", names), ("FORGE_SET", "yes")]);
    inherit.env.remove.push("HOME".into());
    let vars = &first_json(inherit).await["vars"];
    assert!(vars["PATH"].is_string(), "{vars}");
    assert_eq!(
        (&vars["HOME"], &vars["FORGE_SET"]),
        (&serde_json::Value::Null, &"yes".into())
    );

    let mut cleared = fake(&[("FAKE_PRINT_ENV", names), ("FORGE_SET", "yes")]);
    cleared.env.inherit = false;
    let vars = &first_json(cleared).await["vars"];
    assert_eq!(
        vars,
        &serde_json::json!({"PATH": null, "HOME": null, "FORGE_SET": "yes"})
    );
}

#[tokio::test]
async fn the_child_runs_in_cwd_after_the_prepared_files_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.toml");
    std::fs::write(&source, "model = 'fake'").unwrap();
    let mut invocation = fake(&[("FAKE_PRINT_CWD", "1")]);
    invocation.cwd = dir.path().to_path_buf();
    let home = dir.path().join("home/.cli");
    invocation.files = vec![
        PreparedFile {
            path: home.join("settings.json"),
            source: FileSource::Contents(b"{}".to_vec()),
        },
        PreparedFile {
            path: home.join("config.toml"),
            source: FileSource::CopyOf(source),
        },
        PreparedFile {
            path: home.join("skipped"),
            source: FileSource::CopyOf(dir.path().join("missing")),
        },
        PreparedFile {
            path: home.join("shared"),
            source: FileSource::SymlinkTo(dir.path().join("shared-dir")),
        },
    ];
    std::fs::create_dir(dir.path().join("shared-dir")).unwrap();
    // A stale file where the link goes is replaced, not written through.
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("shared"), "stale").unwrap();
    let report = first_json(invocation).await;
    let cwd = Path::new(report["cwd"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(cwd, dir.path().canonicalize().unwrap());
    assert_eq!(
        std::fs::read_to_string(home.join("settings.json")).unwrap(),
        "{}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "model = 'fake'"
    );
    assert!(!home.join("skipped").exists());
    assert_eq!(
        std::fs::read_link(home.join("shared")).unwrap(),
        dir.path().join("shared-dir")
    );
}

#[tokio::test]
async fn a_missing_program_is_executable_not_found_with_a_hint() {
    let runner = TokioProcessRunner::new();
    let check = async |program: &str, hint: Option<&str>, want_hint: &str| {
        let mut invocation = Invocation::new(program, Vec::new(), std::env::temp_dir());
        invocation.install_hint = hint.map(str::to_owned);
        let err = runner
            .spawn(invocation, SpawnOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            err,
            ForgeError::ExecutableNotFound {
                program: program.into(),
                hint: want_hint.into()
            }
        );
    };
    check(
        "forge-no-such-cli",
        Some("npm i -g no-such-cli"),
        "npm i -g no-such-cli",
    )
    .await;
    check(
        "/nonexistent/bin/cli",
        None,
        "install /nonexistent/bin/cli or put it on PATH",
    )
    .await;

    let mut cleared = Invocation::new("sh", Vec::new(), std::env::temp_dir());
    cleared.env.inherit = false; // no PATH for the child: nothing to find it on
    assert!(matches!(
        runner.output(cleared, Duration::from_secs(5)).await,
        Err(ForgeError::ExecutableNotFound { .. })
    ));
}

#[test]
fn locate_finds_paths_and_path_entries() {
    let runner = TokioProcessRunner::new();
    assert!(
        runner
            .locate(Path::new("sh"))
            .is_some_and(|p| p.is_absolute())
    );
    assert_eq!(runner.locate(&fake_cli()), Some(fake_cli()));
    assert_eq!(runner.locate(Path::new("./no/such/program")), None);
    assert_eq!(runner.locate(Path::new("forge-no-such-cli")), None);
}

#[tokio::test]
async fn output_captures_a_short_command_and_times_out_a_hanging_one() {
    let runner = TokioProcessRunner::new();
    let mut version = fake(&[
        ("FAKE_VERSION", "1.2.3 (Fake Code)"),
        ("FAKE_STDERR", "note"),
    ]);
    version.args = vec!["--version".into()];
    let out = runner
        .output(version, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "1.2.3 (Fake Code)\n", "")
    );

    let noisy = fake(&[("FAKE_STDERR", "note"), ("FAKE_EXIT", "2")]);
    let out = runner.output(noisy, Duration::from_secs(10)).await.unwrap();
    assert_eq!((out.code, out.stderr.as_str()), (Some(2), "note\n"));

    let hang = fake(&[("FAKE_HANG", "1")]);
    let err = runner
        .output(hang, Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(err, ForgeError::ProviderTimeout { after_ms: 300 });
}
