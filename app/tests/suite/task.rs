//! The task pipeline over real git, the real file system and the real process runner, with
//! the `echo` provider pointed at a shell script standing in for an agent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use forge_adapter_fs::{FsArtifactStore, FsFiles, FsRepoIndex, FsWorkspace};
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_app::config::ValidationConfig;
use forge_app::task::{TaskPipeline, TaskPorts, TaskRequest};
use forge_app::{CodeAgent, Runtime};
use forge_domain::task::{StopReason, TaskLimits, TaskOutcome, TaskSpec, TaskStatus};
use forge_domain::{ForgeError, ProviderId, Redactor};
use forge_ports::{KillLadder, ProcessRunner, ProviderSettings};
use forge_testkit::fakes::{RecordingLogger, RecordingMetrics};

use super::harness::registry;

/// The "agent": writes 41 first, 42 when told to fix validation errors (and says which);
/// `MODE=none` writes nothing.
const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
text=done
if [ "$MODE" != none ]; then
  case "$prompt" in
    *"FIX VALIDATION ERRORS"*) echo 42 > answer.txt; text="fixed: answer.txt holds 42" ;;
    *) echo 41 > answer.txt ;;
  esac
fi
echo '{"type":"session","id":"s-1"}'
echo "{\"type\":\"result\",\"ok\":true,\"text\":\"$text\"}"
"#;

const TEST_SH: &str = "[ ! -f answer.txt ] || grep -qx 42 answer.txt || { echo \"FAIL: $(cat answer.txt)\"; exit 1; }\n";
const ORIGINAL: &[u8] = b"# Rules\r\nno final newline \xe2\x9c\x93";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

struct Fixture {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    agent: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("test.sh"), TEST_SH).unwrap();
    std::fs::write(repo.join("AGENTS.md"), ORIGINAL).unwrap();
    std::fs::write(repo.join(".gitignore"), ".forgecode/\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    let agent = dir.path().canonicalize().unwrap().join("agent.sh");
    std::fs::write(&agent, AGENT).unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    Fixture {
        _dir: dir,
        repo,
        agent,
    }
}

fn pipeline(agent_script: &Path, env: &[(&str, &str)]) -> TaskPipeline {
    pipeline_with(agent_script, env, None)
}

fn pipeline_with(
    agent_script: &Path,
    env: &[(&str, &str)],
    build_cache: Option<Arc<dyn forge_ports::BuildCache>>,
) -> TaskPipeline {
    let runner: Arc<dyn ProcessRunner> = Arc::new(TokioProcessRunner::new());
    let runtime = Runtime {
        runner: Arc::clone(&runner),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(Redactor::new())),
        vcs: None,
        logger: Arc::new(RecordingLogger::default()),
        metrics: Arc::new(RecordingMetrics::default()),
        clock: Arc::new(forge_adapter_telemetry::SystemClock::new()),
        // Unique ids: the process runner ends leftover processes by run id, so two tests
        // must never share one.
        ids: Arc::new(forge_adapter_telemetry::UuidV7Ids::new()),
    };
    let settings = ProviderSettings {
        binary: Some(agent_script.to_path_buf()),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..ProviderSettings::default()
    };
    let agent = CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", settings)
        .kill_ladder(KillLadder {
            interrupt_grace: std::time::Duration::from_millis(100),
            terminate_grace: std::time::Duration::from_millis(100),
        })
        .build()
        .unwrap();
    TaskPipeline::new(
        agent,
        TaskPorts {
            vcs: Arc::new(GitCli::new(runner)),
            index: Arc::new(FsRepoIndex::new()),
            mapper: Arc::new(forge_adapter_repomap::TreeSitterMapper::new(None)),
            files: Arc::new(FsFiles::new()),
            redactor: Redactor::new(),
            build_cache,
        },
    )
}

fn request(repo: &Path, validation: ValidationConfig, limits: TaskLimits) -> TaskRequest {
    let provider = ProviderId::new("echo").unwrap();
    let mut spec = TaskSpec::new("Write the answer to answer.txt");
    spec.limits = limits;
    TaskRequest {
        task_id: None,
        spec,
        repo: repo.display().to_string(),
        run_template: forge_domain::ExecutionRequest::new(provider.clone(), "", repo),
        branch: None,
        provider,
        model: None,
        fix_model: None,
        validation,
        worktree_root: None,
        cache_dir: repo.join("cache"),
        env: Default::default(),
        session_travel: Default::default(),
    }
}

fn test_step() -> ValidationConfig {
    ValidationConfig {
        test: Some("sh test.sh".into()),
        ..ValidationConfig::default()
    }
}

async fn run(p: &TaskPipeline, req: TaskRequest) -> Result<TaskOutcome, ForgeError> {
    p.run(req, None, TaskPipeline::canceller()).await
}

#[tokio::test]
async fn a_failing_first_change_is_corrected_in_the_same_session() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let outcome = run(&p, request(&f.repo, test_step(), TaskLimits::default()))
        .await
        .unwrap();
    let tree = PathBuf::from(&outcome.worktree);
    assert_eq!(std::fs::read(tree.join("AGENTS.md")).unwrap(), ORIGINAL);
    assert_eq!(
        std::fs::read_to_string(tree.join("answer.txt")).unwrap(),
        "42\n"
    );
    // The user's checkout is untouched.
    assert!(!f.repo.join("answer.txt").exists());
    // The summary is the latest run's: it describes the change as delivered.
    assert_eq!(
        outcome.summary.as_deref(),
        Some("fixed: answer.txt holds 42")
    );
    let task_dir = f
        .repo
        .join(".forgecode/tasks")
        .join(outcome.task_id.as_str());
    for artifact in [
        "plan.json",
        "AGENTS.md",
        "review.json",
        "manifest.json",
        "report.json",
        "validation/1-test.log",
        "validation/2-test.log",
    ] {
        assert!(task_dir.join(artifact).is_file(), "{artifact}");
    }
    assert!(!task_dir.join("guard.json").exists(), "the marker is gone");
    let repo = f.repo.display().to_string();
    insta::with_settings!({filters => vec![
        (repo.as_str(), "[REPO]"),
        (r#""duration_ms": \d+"#, r#""duration_ms": "[ms]""#),
        (r"task-[0-9a-f-]{36}", "task-[id]"),
        (r#""run_id": "[0-9a-f-]{36}""#, r#""run_id": "[run id]""#),
    ]}, {
        insta::assert_json_snapshot!("task_report_fix_cycle", outcome);
    });
}

#[tokio::test]
async fn an_agent_that_changes_nothing_fails_with_no_changes() {
    let f = fixture();
    let p = pipeline(&f.agent, &[("MODE", "none")]);
    let outcome = run(&p, request(&f.repo, test_step(), TaskLimits::default()))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.stop_reason),
        (TaskStatus::Failed, StopReason::NoChanges)
    );
    assert_eq!(outcome.cycles.len(), 1);
    let tree = PathBuf::from(&outcome.worktree);
    assert_eq!(std::fs::read(tree.join("AGENTS.md")).unwrap(), ORIGINAL);
}

#[tokio::test]
async fn no_validation_step_is_not_validated_and_refused_when_required() {
    // Nothing configured, nothing detected (a shell script is no project file).
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let outcome = run(
        &p,
        request(&f.repo, ValidationConfig::default(), TaskLimits::default()),
    )
    .await
    .unwrap();
    assert_eq!(
        (outcome.status, outcome.stop_reason),
        (TaskStatus::NotValidated, StopReason::NoSteps)
    );
    assert_eq!(outcome.status.label(), "not validated (no steps)");
    assert!(
        outcome
            .risk
            .reasons
            .contains(&"+2 not validated (no steps)".to_owned()),
        "{:?}",
        outcome.risk
    );
    // Required: refused before the agent runs, the reason naming the fix, no work tree.
    let limits = TaskLimits {
        require_validation: true,
        ..TaskLimits::default()
    };
    let err = run(&p, request(&f.repo, ValidationConfig::default(), limits))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("no validation step"), "{text}");
    assert!(text.contains("require_validation = false"), "{text}");
    let trees = f.repo.join(".forgecode/worktrees");
    let left = std::fs::read_dir(&trees).map_or(0, |d| d.count());
    assert_eq!(left, 1, "only the first task's work tree");
    // Look-alike: a configured step satisfies the requirement.
    let outcome = run(&p, request(&f.repo, test_step(), limits))
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Validated);
}

#[tokio::test]
async fn correction_cycles_stop_at_the_maximum() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let limits = TaskLimits {
        max_cycles: 1,
        ..TaskLimits::default()
    };
    let outcome = run(&p, request(&f.repo, test_step(), limits))
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::MaxCycles);
    assert_eq!(outcome.cycles.len(), 1);
}

#[tokio::test]
async fn a_hanging_step_is_killed_at_its_timeout() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let validation = ValidationConfig {
        test: Some("[ ! -f answer.txt ] || sleep 30".into()),
        step_timeout_ms: 300,
        ..ValidationConfig::default()
    };
    let limits = TaskLimits {
        max_cycles: 1,
        ..TaskLimits::default()
    };
    let outcome = run(&p, request(&f.repo, validation, limits)).await.unwrap();
    let step = &outcome.cycles[0].validation.as_ref().unwrap().steps[0];
    assert!(step.timed_out, "{step:?}");
    assert!(step.duration_ms < 10_000, "{step:?}");
    assert_eq!(outcome.stop_reason, StopReason::MaxCycles);
}

#[tokio::test]
async fn bad_input_is_a_clear_error_before_anything_starts() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let not_repo = f.repo.parent().unwrap().to_path_buf();
    let err = run(&p, request(&not_repo, test_step(), TaskLimits::default()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is not a git repository"), "{err}");

    let mut req = request(&f.repo, test_step(), TaskLimits::default());
    req.spec.base = Some("no-such-branch".into());
    let err = run(&p, req).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("\"no-such-branch\" does not exist"),
        "{err}"
    );

    let missing_tool = ValidationConfig {
        test: Some("definitely-not-a-tool-xyz --all".into()),
        ..ValidationConfig::default()
    };
    let err = run(&p, request(&f.repo, missing_tool, TaskLimits::default()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ForgeError::ExecutableNotFound { program, .. } if program == "definitely-not-a-tool-xyz"),
        "{err}"
    );
    // Refused tasks leave no work tree behind.
    let trees = std::fs::read_dir(f.repo.join(".forgecode/worktrees"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(trees, 0);
}

#[tokio::test]
async fn a_url_is_cloned_into_the_cache_then_fetched() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let url = format!("file://{}", f.repo.display());
    let mut req = request(&f.repo, test_step(), TaskLimits::default());
    req.repo.clone_from(&url);
    req.cache_dir = f.repo.parent().unwrap().join("cache");
    let first = run(&p, req.clone()).await.unwrap();
    assert_eq!(first.stop_reason, StopReason::Validated);
    assert!(
        first
            .worktree
            .starts_with(&req.cache_dir.display().to_string())
    );
    // A second task fetches into the same cache.
    let second = run(&p, req).await.unwrap();
    assert_eq!(second.stop_reason, StopReason::Validated);
    assert_ne!(first.task_id, second.task_id);
}

/// The instruction file after a crash: the marker restores it byte for byte (`task gc`),
/// removes a file forge created, and only drops the marker when the work tree is gone.
#[tokio::test]
async fn crash_markers_restore_instruction_files() {
    use forge_app::task::guard_file::{install, restore_leftovers};
    let files = FsFiles::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let tasks = root.join("repo/.forgecode/tasks");
    // (tree has the file before?, tree still exists at gc time?, expected file afterwards)
    let cases: &[(bool, bool, Option<&[u8]>)] = &[
        (true, true, Some(ORIGINAL)),
        (false, true, None),
        (true, false, None),
    ];
    for (i, (existed, tree_left, _)) in cases.iter().enumerate() {
        let tree = root.join(format!("tree{i}"));
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join(".git"), "gitdir: elsewhere\n").unwrap();
        if *existed {
            std::fs::write(tree.join("AGENTS.md"), ORIGINAL).unwrap();
        }
        let task_dir = tasks.join(format!("task-{i}"));
        install(&files, &task_dir, &tree.join("AGENTS.md"), |original| {
            let mut b = b"forge section\n".to_vec();
            b.extend_from_slice(original.unwrap_or_default());
            b
        })
        .await
        .unwrap();
        assert!(task_dir.join("guard.json").is_file());
        if !tree_left {
            std::fs::remove_dir_all(&tree).unwrap();
        }
    }
    // forge was SIGKILLed: nothing restored yet. gc:
    let restored = restore_leftovers(&files, &tasks).await.unwrap();
    assert_eq!(restored.len(), 2, "{restored:?}");
    for (i, (_, _, expected)) in cases.iter().enumerate() {
        let tree = root.join(format!("tree{i}"));
        assert_eq!(
            std::fs::read(tree.join("AGENTS.md")).ok().as_deref(),
            *expected,
            "case {i}"
        );
        assert!(
            !tasks.join(format!("task-{i}/guard.json")).exists(),
            "case {i}"
        );
    }
    assert!(restore_leftovers(&files, &tasks).await.unwrap().is_empty());
}

/// The `echo` CLI has no turn cap of its own: forge counts the tool calls live and stops
/// the run when the cap is crossed, with Claude's stop reason.
#[tokio::test]
async fn a_turn_cap_is_enforced_live_for_a_cli_without_the_flag() {
    let f = fixture();
    let script = f.repo.parent().unwrap().join("busy.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat > /dev/null\necho 41 > answer.txt\necho '{\"type\":\"session\",\"id\":\"s-1\"}'\nfor i in 1 2 3 4 5 6 7 8 9; do echo \"{\\\"type\\\":\\\"tool\\\",\\\"id\\\":\\\"t$i\\\",\\\"name\\\":\\\"Bash\\\",\\\"input\\\":{}}\"; sleep 0.3; done\ntouch finished.txt\necho '{\"type\":\"result\",\"ok\":true,\"text\":\"done\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = pipeline(&script, &[]);
    let mut req = request(&f.repo, test_step(), TaskLimits::default());
    req.run_template.max_turns = Some(2);
    let outcome = run(&p, req).await.unwrap();
    assert_eq!(
        (outcome.status, outcome.stop_reason),
        (TaskStatus::Stopped, StopReason::MaxTurns)
    );
    assert_eq!(outcome.cycles.len(), 1, "{outcome:#?}");
    let tree = PathBuf::from(&outcome.worktree);
    assert!(
        !tree.join("finished.txt").exists(),
        "the run was stopped, not waited for"
    );
    assert_eq!(std::fs::read(tree.join("AGENTS.md")).unwrap(), ORIGINAL);
}

#[tokio::test]
async fn validation_uses_the_build_cache_and_each_step_reports_it() {
    use forge_domain::task::{CacheKind, CacheState, StepCache};
    use forge_testkit::fakes::RecordingBuildCache;
    let f = fixture();
    std::fs::write(f.repo.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    git(&f.repo, &["add", "-A"]);
    git(&f.repo, &["commit", "-q", "-m", "cargo"]);
    let cache_root = f.repo.parent().unwrap().join("cache");
    let cache = Arc::new(RecordingBuildCache::new(&cache_root, CacheState::Seeded, 3));
    let p = pipeline_with(&f.agent, &[], Some(cache.clone()));
    let validation = ValidationConfig {
        build: Some("echo target=$CARGO_TARGET_DIR".into()),
        test: Some("sh test.sh".into()),
        ..ValidationConfig::default()
    };
    let outcome = run(&p, request(&f.repo, validation, TaskLimits::default()))
        .await
        .unwrap();
    let baseline = outcome.baseline.unwrap();
    let build = &baseline.steps[0];
    let entry = build.cache.as_ref().unwrap().entry.clone();
    assert!(
        entry.starts_with("cargo-") && entry.ends_with(" slot 0"),
        "{entry}"
    );
    assert_eq!(
        build.cache,
        Some(StepCache {
            kind: CacheKind::Cargo,
            entry: entry.clone(),
            state: CacheState::Seeded,
            warm_files: 3,
        })
    );
    let dir = cache_root.join(entry.trim_end_matches(" slot 0"));
    assert_eq!(build.output_tail, format!("target={}", dir.display()));
    // Later steps of the same cache in the task find it warm.
    assert_eq!(
        baseline.steps[1].cache.as_ref().map(|c| c.state),
        Some(CacheState::Hit)
    );
    let calls = cache.calls();
    assert_eq!(calls[0], "copy Cargo.lock");
    assert!(calls[1].starts_with("claim cargo-") && calls[1].ends_with("seed=true"));
    assert_eq!(calls[2..4], ["restore".to_owned(), "record".to_owned()]);
    // Every validation pass records what the build judged.
    assert_eq!(
        calls.iter().filter(|c| *c == "record").count(),
        1 + outcome
            .cycles
            .iter()
            .filter(|c| c.validation.is_some())
            .count()
    );
    // Forge's folder is excluded through .git/info/exclude.
    let exclude = std::fs::read_to_string(f.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|l| l == "/.forgecode/"), "{exclude}");
}

/// The "agent" of the masking cases: `MODE=break` breaks `test_data` (every run),
/// `MODE=safe` adds a file no test reads.
const MASK_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
case "$MODE" in
  break) echo broken > data.txt ;;
  *) echo note > notes.txt ;;
esac
echo '{"type":"session","id":"s-1"}'
echo '{"type":"result","ok":true,"text":"done"}'
"#;

const MASK_TESTS: &str = "import unittest\n\n\nclass AppTest(unittest.TestCase):\n    def test_legacy(self):\n        self.assertEqual(1, 2)\n\n    def test_data(self):\n        with open('data.txt') as f:\n            self.assertEqual(f.read(), 'ok\\n')\n";

fn masking_fixture() -> Fixture {
    let f = fixture();
    std::fs::write(f.repo.join("test_app.py"), MASK_TESTS).unwrap();
    std::fs::write(f.repo.join("data.txt"), "ok\n").unwrap();
    git(&f.repo, &["add", "-A"]);
    git(&f.repo, &["commit", "-q", "-m", "tests"]);
    std::fs::write(&f.agent, MASK_AGENT).unwrap();
    f
}

fn unittest_step() -> ValidationConfig {
    ValidationConfig {
        test: Some("python3 -m unittest".into()),
        ..ValidationConfig::default()
    }
}

#[tokio::test]
async fn a_test_that_already_failed_does_not_hide_the_test_a_change_breaks() {
    let f = masking_fixture();
    let p = pipeline(&f.agent, &[("MODE", "break")]);
    let limits = TaskLimits {
        max_cycles: 2,
        ..TaskLimits::default()
    };
    let outcome = run(&p, request(&f.repo, unittest_step(), limits))
        .await
        .unwrap();
    assert_eq!(
        (outcome.status, outcome.stop_reason),
        (TaskStatus::Failed, StopReason::MaxCycles)
    );
    let tests = outcome
        .validation()
        .unwrap()
        .compare(outcome.baseline.as_ref());
    assert_eq!(tests.len(), 1);
    assert!(tests[0].regression);
    assert_eq!(tests[0].newly_failing, ["test_app.AppTest.test_data"]);
    assert_eq!(tests[0].already_failing, ["test_app.AppTest.test_legacy"]);
    // The instruction file named the test that already failed.
    let written = f
        .repo
        .join(".forgecode/tasks")
        .join(outcome.task_id.as_str())
        .join("AGENTS.md");
    let written = std::fs::read_to_string(written).unwrap();
    assert!(
        written.contains("test_app.AppTest.test_legacy"),
        "{written}"
    );
}

#[tokio::test]
async fn a_change_that_breaks_nothing_is_validated_beside_a_failing_test() {
    let f = masking_fixture();
    let p = pipeline(&f.agent, &[("MODE", "safe")]);
    let outcome = run(&p, request(&f.repo, unittest_step(), TaskLimits::default()))
        .await
        .unwrap();
    assert_eq!(outcome.status, TaskStatus::Validated, "{:?}", outcome.error);
    let tests = outcome
        .validation()
        .unwrap()
        .compare(outcome.baseline.as_ref());
    assert!(!tests[0].regression);
    assert_eq!(tests[0].already_failing, ["test_app.AppTest.test_legacy"]);
    assert!(tests[0].newly_failing.is_empty());
}

/// A task whose id is given (a queued task's) keeps it for branch and report; run again on
/// the same machine after an attempt that delivered nothing (its worker died), it starts
/// afresh from its base; once a commit carries its trailer, running it again is refused.
#[tokio::test]
async fn a_given_task_id_is_kept_and_an_earlier_attempt_cleared() {
    let f = fixture();
    let p = pipeline(&f.agent, &[]);
    let id = forge_domain::task::TaskId::new("q-given").unwrap();
    let given = || {
        let mut req = request(&f.repo, test_step(), TaskLimits::default());
        req.task_id = Some(id.clone());
        req
    };
    let first = run(&p, given()).await.unwrap();
    assert_eq!(first.task_id, id);
    assert_eq!(first.branch, "forge/q-given");
    // The first attempt's work tree and branch are still there, nothing committed.
    let tree = PathBuf::from(&first.worktree);
    assert!(tree.join("answer.txt").is_file());
    let second = run(&p, given()).await.unwrap();
    assert_eq!(second.status, TaskStatus::Validated, "{:?}", second.error);
    assert_eq!(second.worktree, first.worktree);
    // Delivered: a commit with the trailer on the branch.
    git(&tree, &["add", "answer.txt"]);
    git(&tree, &["commit", "-q", "-m", "fix\n\nForge-Task: q-given"]);
    let err = run(&p, given()).await.unwrap_err();
    assert!(
        matches!(&err, ForgeError::InvalidRequest { reason } if reason.contains("already has commit")),
        "{err:?}"
    );
    assert!(
        tree.join("answer.txt").is_file(),
        "the delivered tree was kept"
    );
}

/// The "agent" of the failure map's test: keeps every prompt in `$PROMPTS`, writes the
/// wrong answer first and the right one when corrected.
const LOGGING_AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
printf '%s\n=====\n' "$prompt" >> "$PROMPTS"
case "$prompt" in
  *"FIX VALIDATION ERRORS"*) sed -i 's/41/42/' src/answer.rs ;;
  *) printf 'pub fn compute_answer() -> u32 {\n    41\n}\n' > src/answer.rs ;;
esac
echo '{"type":"session","id":"s-1"}'
echo '{"type":"result","ok":true,"text":"done"}'
"#;

#[tokio::test]
async fn a_correction_prompt_carries_the_map_ranked_by_the_failure() {
    let f = fixture();
    std::fs::create_dir_all(f.repo.join("src")).unwrap();
    for (path, text) in [
        (
            "src/answer.rs",
            "pub fn compute_answer() -> u32 {\n    0\n}\n",
        ),
        (
            "src/report.rs",
            "use crate::answer::compute_answer;\n\npub fn render_report() -> String {\n    compute_answer().to_string()\n}\n",
        ),
        ("src/unrelated.rs", "pub struct Palette;\n"),
        (
            "check.sh",
            "! grep -qx '    41' src/answer.rs || { echo 'error: wrong answer'; echo ' --> src/answer.rs:2:5'; exit 1; }\n",
        ),
    ] {
        std::fs::write(f.repo.join(path), text).unwrap();
    }
    git(&f.repo, &["add", "-A"]);
    git(&f.repo, &["commit", "-q", "-m", "code"]);
    let agent = f.repo.parent().unwrap().join("logging-agent.sh");
    std::fs::write(&agent, LOGGING_AGENT).unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prompts = f.repo.parent().unwrap().join("prompts.txt");
    let p = pipeline(&agent, &[("PROMPTS", prompts.to_str().unwrap())]);
    let validation = ValidationConfig {
        test: Some("sh check.sh".into()),
        ..ValidationConfig::default()
    };
    let outcome = run(&p, request(&f.repo, validation, TaskLimits::default()))
        .await
        .unwrap();
    assert_eq!(outcome.status, TaskStatus::Validated, "{outcome:?}");
    let log = std::fs::read_to_string(&prompts).unwrap();
    let runs: Vec<&str> = log.split("=====\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(runs.len(), 2, "{log}");
    let fix = runs[1];
    assert!(fix.contains("FIX VALIDATION ERRORS"), "{fix}");
    let at = fix
        .find("## Where to look")
        .expect("a map in the correction prompt");
    let map = &fix[at..];
    // the file the failure names comes first, with its definition; the file using it follows
    let first = map
        .find("src/answer.rs\n  1: pub fn compute_answer() -> u32")
        .unwrap();
    let user = map.find("src/report.rs").unwrap();
    assert!(first < user, "{map}");
    assert!(map.len() < 1_400, "{map}");
    // the first prompt had no such section
    assert!(!runs[0].contains("## Where to look"), "{}", runs[0]);
}
