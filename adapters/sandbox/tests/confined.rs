//! The sandbox around REAL processes (bubblewrap, the real process runner): each escape of
//! issue 31 refused with the mode on and possible with it off, the work tree still writable,
//! the kill ladder's SIGINT reaching the agent and nothing left running, and a machine
//! without bubblewrap refusing to run unconfined.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failing test"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use forge_adapter_process::TokioProcessRunner;
use forge_adapter_sandbox::{SandboxConfig, SandboxedRunner};
use forge_domain::ForgeError;
use forge_domain::sandbox::{Confinement, SandboxMode, SandboxSettings};
use forge_ports::{Invocation, KillLadder, ProcessRunner, SpawnOptions, StdoutItem};

struct Scene {
    _dirs: Vec<tempfile::TempDir>,
    home: PathBuf,
    tree: PathBuf,
    outside: PathBuf,
}

/// A fake home with a key, a work tree (a git checkout: `.git/hooks`), a directory outside.
/// Not under /tmp unless asked: the private /tmp would hide them for the wrong reason.
fn scene(tree_under_tmp: bool) -> Scene {
    let base = env!("CARGO_TARGET_TMPDIR");
    let home = tempfile::tempdir_in(base).unwrap();
    let outside = tempfile::tempdir_in(base).unwrap();
    let tree = if tree_under_tmp {
        tempfile::tempdir_in("/tmp").unwrap()
    } else {
        tempfile::tempdir_in(base).unwrap()
    };
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::create_dir_all(tree.path().join(".git/hooks")).unwrap();
    let paths = (
        home.path().to_path_buf(),
        tree.path().to_path_buf(),
        outside.path().to_path_buf(),
    );
    Scene {
        _dirs: vec![home, tree, outside],
        home: paths.0,
        tree: paths.1,
        outside: paths.2,
    }
}

fn runner(mode: SandboxMode, home: &Path, bwrap: &str) -> SandboxedRunner {
    SandboxedRunner::new(
        Arc::new(TokioProcessRunner::new()),
        SandboxConfig {
            settings: SandboxSettings {
                mode,
                ..SandboxSettings::default()
            },
            bwrap: bwrap.into(),
            home: Some(home.to_path_buf()),
            ..SandboxConfig::default()
        },
    )
}

/// Runs `script` confined to the scene's work tree; each line of the script's output.
async fn run(runner: &SandboxedRunner, scene: &Scene, script: &str) -> String {
    let mut invocation = Invocation::new("sh", vec!["-c".into(), script.into()], &scene.tree)
        .confined(Confinement::work_tree(&scene.tree));
    invocation
        .env
        .set
        .insert("AWS_SECRET_ACCESS_KEY".into(), "s3cr3t".into());
    let out = runner
        .output(invocation, Duration::from_secs(30))
        .await
        .unwrap();
    format!("{}{}", out.stdout, out.stderr)
}

const ESCAPES: &str = r#"
H="$1"
cat "$HOME_UNDER_TEST/.ssh/id_rsa" >/dev/null 2>&1 && echo read-key
echo x > "$OUTSIDE/planted" 2>/dev/null && echo wrote-outside
echo x > .git/hooks/pre-commit 2>/dev/null && echo wrote-hook
echo x > /tmp/forge-sandbox-shared-$$ 2>/dev/null && echo tmp-$$
cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -q s3cr3t && echo saw-secret
echo x > in-tree && echo wrote-tree
"#;

fn escapes(scene: &Scene) -> String {
    format!(
        "HOME_UNDER_TEST='{}' OUTSIDE='{}'\n{ESCAPES}",
        scene.home.display(),
        scene.outside.display()
    )
}

fn shared_tmp_written(output: &str) -> bool {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("tmp-"))
        .any(|pid| Path::new(&format!("/tmp/forge-sandbox-shared-{pid}")).exists())
}

#[tokio::test]
async fn every_escape_is_refused_and_the_work_tree_stays_writable() {
    for under_tmp in [false, true] {
        let scene = scene(under_tmp);
        let out = run(
            &runner(SandboxMode::On, &scene.home, "bwrap"),
            &scene,
            &escapes(&scene),
        )
        .await;
        for escape in ["read-key", "wrote-outside", "wrote-hook", "saw-secret"] {
            assert!(
                !out.contains(escape),
                "{escape} (tree under /tmp: {under_tmp}): {out}"
            );
        }
        assert!(!shared_tmp_written(&out), "{out}");
        assert!(out.contains("wrote-tree"), "{out}");
        assert!(scene.tree.join("in-tree").exists());
        assert!(!scene.outside.join("planted").exists());
        assert!(!scene.tree.join(".git/hooks/pre-commit").exists());
    }
}

/// Protected paths the tree does not have: bubblewrap cannot bind over them, so what the
/// run created of them is removed when it ends and reported.
const PLANTS: &str = "mkdir -p .vscode .husky && echo x > .vscode/tasks.json && \
    echo x > .husky/pre-commit && echo x > .envrc && echo x > notes.md && echo planted";

#[tokio::test]
async fn protected_paths_a_run_creates_are_removed_and_reported() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    // A short command: the refusals on its stderr.
    let out = run(&runner, &scene, PLANTS).await;
    assert!(out.contains("planted"), "{out}");
    for created in [".vscode", ".husky", ".envrc"] {
        let path = scene.tree.join(created);
        assert!(!path.exists(), "{created} left");
        assert!(
            out.contains(&format!(
                "forge sandbox: access to {} refused",
                path.display()
            )),
            "{out}"
        );
    }
    assert!(scene.tree.join("notes.md").exists());

    // A spawned one (the agent, a validation step): the refusals on its denial stream once
    // it was waited for.
    let invocation = Invocation::new("sh", vec!["-c".into(), PLANTS.into()], &scene.tree)
        .confined(Confinement::work_tree(&scene.tree));
    let mut child = runner
        .spawn(invocation, SpawnOptions::default())
        .await
        .unwrap();
    let mut denials = child.take_sandbox_denials().unwrap();
    while child.next_stdout().await.unwrap().is_some() {}
    child.wait().await.unwrap();
    let mut seen = Vec::new();
    while let Some(denial) = denials.next_denial().await {
        assert_eq!(denial.kind, forge_domain::DenialKind::Fs);
        seen.push(denial.target);
    }
    seen.sort();
    let want: Vec<String> = [".envrc", ".husky", ".vscode"]
        .iter()
        .map(|p| scene.tree.join(p).display().to_string())
        .collect();
    assert_eq!(seen, want);
    assert!(!scene.tree.join(".vscode").exists());
}

#[tokio::test]
async fn with_the_sandbox_off_the_same_escapes_succeed() {
    let scene = scene(false);
    let out = run(
        &runner(SandboxMode::Off, &scene.home, "bwrap"),
        &scene,
        &escapes(&scene),
    )
    .await;
    for escape in [
        "read-key",
        "wrote-outside",
        "wrote-hook",
        "saw-secret",
        "wrote-tree",
    ] {
        assert!(out.contains(escape), "{escape}: {out}");
    }
    assert!(shared_tmp_written(&out), "{out}");
    for line in out.lines().filter_map(|l| l.strip_prefix("tmp-")) {
        std::fs::remove_file(format!("/tmp/forge-sandbox-shared-{line}")).unwrap();
    }
}

#[tokio::test]
async fn forge_own_commands_are_not_confined() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    let script = format!("echo x > '{}/own' && echo ok", scene.outside.display());
    let invocation = Invocation::new("sh", vec!["-c".into(), script], &scene.tree);
    let out = runner
        .output(invocation, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(out.stdout.trim(), "ok");
}

#[tokio::test]
async fn without_bubblewrap_a_confined_run_is_refused_with_the_fix() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "/nonexistent/bwrap");
    let invocation = Invocation::new("true", Vec::new(), &scene.tree)
        .confined(Confinement::work_tree(&scene.tree));
    let err = runner
        .output(invocation, Duration::from_secs(30))
        .await
        .unwrap_err();
    let ForgeError::InvalidRequest { reason } = err else {
        panic!("{err:?}");
    };
    assert!(reason.contains("bubblewrap"), "{reason}");
    assert!(reason.contains("apt-get install bubblewrap"), "{reason}");
    assert!(reason.contains("--sandbox off"), "{reason}");
    // Off: the same machine runs it unconfined, as chosen.
    let off = runner_off_without_bwrap(&scene);
    let invocation = Invocation::new("true", Vec::new(), &scene.tree)
        .confined(Confinement::work_tree(&scene.tree));
    assert_eq!(
        off.output(invocation, Duration::from_secs(30))
            .await
            .unwrap()
            .code,
        Some(0)
    );
}

#[tokio::test]
async fn a_successful_probe_is_kept_for_the_next_forge_and_a_failed_one_is_not() {
    let scene = scene(false);
    let kept = scene.home.join("cache/sandbox-probe");
    let with_kept = |bwrap: &str| {
        let mut config = SandboxConfig {
            settings: SandboxSettings {
                mode: SandboxMode::On,
                ..SandboxSettings::default()
            },
            bwrap: bwrap.into(),
            home: Some(scene.home.clone()),
            ..SandboxConfig::default()
        };
        config.probe_kept = Some(kept.clone());
        SandboxedRunner::new(Arc::new(TokioProcessRunner::new()), config)
    };
    assert!(with_kept("/nonexistent/bwrap").mechanism().await.is_err());
    assert!(!kept.exists(), "a failure is not kept");
    let first = with_kept("bwrap").mechanism().await.unwrap().clone();
    assert!(first.version.starts_with("bubblewrap"), "{first:?}");
    // The next forge reads the verdict instead of starting a trial sandbox: a version only
    // the file says proves no probe ran.
    let text = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(&kept, text.replace(&first.version, "bubblewrap (kept)")).unwrap();
    let second = with_kept("bwrap").mechanism().await.unwrap().clone();
    assert_eq!(second.version, "bubblewrap (kept)");
    assert_eq!(second.bwrap, first.bwrap);
    // Another bubblewrap is another machine state: probed again.
    let copy = scene.home.join("bwrap-copy");
    std::fs::copy(&first.bwrap, &copy).unwrap();
    let third = with_kept(copy.to_str().unwrap())
        .mechanism()
        .await
        .unwrap()
        .clone();
    assert!(third.version.starts_with("bubblewrap"), "{third:?}");
}

fn runner_off_without_bwrap(scene: &Scene) -> SandboxedRunner {
    runner(SandboxMode::Off, &scene.home, "/nonexistent/bwrap")
}

#[tokio::test]
async fn the_kill_ladder_interrupt_reaches_the_agent_and_nothing_survives() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    let script = "trap 'echo graceful; exit 7' INT; echo started; sleep 1000 & wait";
    let invocation = Invocation::new("sh", vec!["-c".into(), script.into()], &scene.tree)
        .confined(Confinement::work_tree(&scene.tree));
    let mut child = runner
        .spawn(invocation, SpawnOptions::default())
        .await
        .unwrap();
    let pid = child.pid().unwrap();
    let first = child.next_stdout().await.unwrap();
    assert!(matches!(first, Some(StdoutItem::Line { ref text, .. }) if text == "started"));
    child
        .killer()
        .shutdown(KillLadder {
            interrupt_grace: Duration::from_secs(10),
            terminate_grace: Duration::from_secs(10),
        })
        .await
        .unwrap();
    let mut lines = Vec::new();
    while let Some(item) = child.next_stdout().await.unwrap() {
        if let StdoutItem::Line { text, .. } = item {
            lines.push(text);
        }
    }
    let exit = child.wait().await.unwrap();
    assert_eq!(lines, ["graceful"]);
    assert_eq!(exit.code, Some(7), "{exit:?}");
    // The whole group is gone: no process of it is left (the sleep included). The kernel
    // kills what is left of a PID namespace when its init ends, and reaps it a moment later.
    let mut group = alive_in_group(pid);
    for _ in 0..100 {
        if group.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        group = alive_in_group(pid);
    }
    assert!(group.is_empty(), "{group:?}");
}

/// The `stat` lines of the live (not zombie) processes of process group `pgrp`.
fn alive_in_group(pgrp: u32) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let after = stat.rsplit_once(") ").map(|(_, rest)| rest.to_owned());
            // Fields after the name: state, ppid, pgrp. Zombies are dead already.
            after.is_some_and(|rest| {
                let fields: Vec<&str> = rest.split(' ').collect();
                fields[0] != "Z" && fields[2] == pgrp.to_string()
            })
        })
        .collect()
}

/// The same walls for a user without privileges: the wrapped command line forge builds is
/// run through `runuser` as an unprivileged user (made with `useradd` when missing).
#[tokio::test]
async fn an_unprivileged_user_is_confined_the_same() {
    let is_root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        .starts_with(b"0\n");
    let scene = scene(true);
    for dir in [&scene.home, &scene.tree, &scene.outside] {
        let status = std::process::Command::new("chmod")
            .args(["-R", "a+rwX"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    let invocation = Invocation::new(
        "sh",
        vec!["-c".into(), format!("id -u; {}", escapes(&scene))],
        &scene.tree,
    )
    .confined(Confinement::work_tree(&scene.tree));
    let wrapped = runner.wrap(invocation).await.unwrap();
    let mut command = if is_root {
        let user = "forgetest";
        let exists = std::process::Command::new("id")
            .arg(user)
            .output()
            .unwrap()
            .status
            .success();
        if !exists {
            let made = std::process::Command::new("useradd")
                .args(["--no-create-home", user])
                .status()
                .unwrap();
            assert!(made.success(), "useradd {user}");
        }
        let mut c = std::process::Command::new("runuser");
        c.args(["-u", user, "--"]).arg(&wrapped.program);
        c
    } else {
        std::process::Command::new(&wrapped.program)
    };
    command
        .args(&wrapped.args)
        .current_dir(&scene.tree)
        .env_clear()
        .envs(&wrapped.env.set);
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(text.lines().next(), Some("0"), "not unprivileged: {text}");
    for escape in ["read-key", "wrote-outside", "wrote-hook", "saw-secret"] {
        assert!(!text.contains(escape), "{escape}: {text}");
    }
    assert!(!shared_tmp_written(&text), "{text}");
    assert!(text.contains("wrote-tree"), "{text}");
}

/// The agent's CLI writes the state directory its environment names (`CODEX_HOME` outside the
/// work tree and the home) and its own state in the `HOME` its invocation sets; the code it
/// runs does not; the rest of the user's home is empty inside but for its toolchains.
#[tokio::test]
async fn the_clis_named_state_is_writable_and_the_rest_of_the_home_is_not_there() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    let codex_home = scene.outside.join("codex-home");
    let cli_home = scene.outside.join("agent-home");
    std::fs::create_dir_all(cli_home.join(".codex")).unwrap();
    std::fs::create_dir_all(scene.home.join("other-repo")).unwrap();
    std::fs::write(scene.home.join("other-repo/notes"), "mine").unwrap();
    std::fs::create_dir_all(scene.home.join(".cargo")).unwrap();
    std::fs::write(scene.home.join(".cargo/config.toml"), "[build]").unwrap();
    let script = format!(
        "echo x > '{codex}/state' && echo wrote-codex-home\n\
         echo x > '{cli}/.codex/state' && echo wrote-cli-state\n\
         cat '{home}/other-repo/notes' 2>/dev/null && echo read-other-repo\n\
         cat '{home}/.cargo/config.toml' >/dev/null && echo read-toolchain\n",
        codex = codex_home.display(),
        cli = cli_home.display(),
        home = scene.home.display(),
    );
    let invocation = |agent: bool| {
        let mut confinement = Confinement::work_tree(&scene.tree);
        confinement.cli_state_from_env = agent;
        if agent {
            confinement.user_state = vec![".codex".into()];
        }
        let mut invocation = Invocation::new("sh", vec!["-c".into(), script.clone()], &scene.tree)
            .confined(confinement);
        let set = &mut invocation.env.set;
        set.insert("CODEX_HOME".into(), codex_home.display().to_string());
        set.insert("HOME".into(), cli_home.display().to_string());
        invocation
    };
    let runner = &runner;
    let out = move |invocation| async move {
        let out = runner
            .output(invocation, Duration::from_secs(30))
            .await
            .unwrap();
        format!("{}{}", out.stdout, out.stderr)
    };
    let agent = out(invocation(true)).await;
    for want in ["wrote-codex-home", "wrote-cli-state", "read-toolchain"] {
        assert!(agent.contains(want), "{want} missing: {agent}");
    }
    assert!(!agent.contains("read-other-repo"), "{agent}");
    let code = out(invocation(false)).await;
    assert!(!code.contains("wrote-codex-home"), "{code}");
    assert!(code.contains("read-toolchain"), "{code}");
}

/// Code forge runs (a validation) writes the package caches its environment puts outside the
/// home (`CARGO_HOME=/usr/local/cargo` in the rust image): a build that fetches a crate keeps
/// it. The rest of that cargo home is not written, and the agent's CLI gets none of it.
#[tokio::test]
async fn code_writes_the_package_caches_its_environment_names_and_nothing_else_there() {
    let scene = scene(false);
    let runner = runner(SandboxMode::On, &scene.home, "bwrap");
    let cargo_home = scene.outside.join("cargo");
    std::fs::create_dir_all(cargo_home.join("registry/cache")).unwrap();
    std::fs::write(cargo_home.join(".package-cache"), "").unwrap();
    std::fs::write(cargo_home.join("config.toml"), "[build]").unwrap();
    let script = format!(
        "echo crate > '{cargo}/registry/cache/page_size-0.6.0.crate' && echo wrote-registry\n\
         : > '{cargo}/.package-cache' && echo locked-package-cache\n\
         echo x >> '{cargo}/config.toml' && echo wrote-config\n",
        cargo = cargo_home.display(),
    );
    let invocation = |code: bool| {
        let mut confinement = Confinement::work_tree(&scene.tree);
        confinement.caches_from_env = code;
        let mut invocation = Invocation::new("sh", vec!["-c".into(), script.clone()], &scene.tree)
            .confined(confinement);
        invocation
            .env
            .set
            .insert("CARGO_HOME".into(), cargo_home.display().to_string());
        invocation
    };
    let output = |code: bool| {
        let runner = &runner;
        let invocation = invocation(code);
        async move {
            let out = runner
                .output(invocation, Duration::from_secs(30))
                .await
                .unwrap();
            format!("{}{}", out.stdout, out.stderr)
        }
    };
    let code = output(true).await;
    for want in ["wrote-registry", "locked-package-cache"] {
        assert!(code.contains(want), "{want} missing: {code}");
    }
    // What the script saw is no proof for a scene under /tmp (the private /tmp takes such a
    // write): the real files are.
    assert_eq!(
        std::fs::read_to_string(cargo_home.join("config.toml")).unwrap(),
        "[build]"
    );
    assert_eq!(
        std::fs::read_to_string(cargo_home.join("registry/cache/page_size-0.6.0.crate")).unwrap(),
        "crate\n"
    );
    std::fs::remove_file(cargo_home.join("registry/cache/page_size-0.6.0.crate")).unwrap();
    let agent = output(false).await;
    assert!(
        !cargo_home
            .join("registry/cache/page_size-0.6.0.crate")
            .exists(),
        "{agent}"
    );
}
