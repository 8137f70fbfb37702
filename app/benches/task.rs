//! Task pipeline overhead: what a task costs beyond its agent run and its validation
//! commands (a printed figure, not a timed test). Target (issue 13): < 300 ms per task.
//!
//! The agent is a shell script that writes one file at once; validation is `true`. Per
//! round: the agent alone through `CodeAgent::run` in a fresh work tree (its own time),
//! then a whole task; overhead = task − agent − the validation steps' own durations.
//! Run: `cargo bench -p forge-app --bench task` (or `cargo xtask bench`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark binary"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use forge_adapter_fs::{FsArtifactStore, FsFiles, FsRepoIndex, FsWorkspace};
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_telemetry::{NoopLogger, NoopMetrics, SystemClock, UuidV7Ids};
use forge_app::config::ValidationConfig;
use forge_app::task::{TaskPipeline, TaskPorts, TaskRequest};
use forge_app::{CodeAgent, ProviderRegistry, Runtime};
use forge_domain::task::{StopReason, TaskSpec};
use forge_domain::{ExecutionRequest, ProviderId, Redactor};
use forge_ports::{ProcessRunner, Provider, ProviderSettings};
use forge_testkit::fakes::EchoProvider;

const ROUNDS: usize = 9;

const AGENT: &str = "#!/bin/sh\ncat > /dev/null\necho 42 > answer.txt\necho '{\"type\":\"session\",\"id\":\"s-1\"}'\necho '{\"type\":\"result\",\"ok\":true,\"text\":\"done\"}'\n";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@example.invalid",
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("README.md"), "bench\n").unwrap();
    std::fs::write(repo.join(".gitignore"), ".forgecode/\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    let agent_script = base.join("agent.sh");
    std::fs::write(&agent_script, AGENT).unwrap();
    std::fs::set_permissions(&agent_script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let runner: Arc<dyn ProcessRunner> = Arc::new(TokioProcessRunner::new());
    let runtime = Runtime {
        runner: Arc::clone(&runner),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(Redactor::new())),
        vcs: None,
        logger: Arc::new(NoopLogger),
        metrics: Arc::new(NoopMetrics),
        clock: Arc::new(SystemClock::new()),
        ids: Arc::new(UuidV7Ids::new()),
    };
    let registry = ProviderRegistry::new()
        .register(ProviderId::new("echo").unwrap(), |s: ProviderSettings| {
            Arc::new(EchoProvider::new(s)) as Arc<dyn Provider>
        });
    let settings = ProviderSettings {
        binary: Some(agent_script.clone()),
        ..ProviderSettings::default()
    };
    let agent = CodeAgent::builder(runtime, registry)
        .provider("echo")
        .provider_settings("echo", settings)
        .build()
        .unwrap();
    let pipeline = TaskPipeline::new(
        agent.clone(),
        TaskPorts {
            vcs: Arc::new(GitCli::new(runner)),
            index: Arc::new(FsRepoIndex::new()),
            mapper: Arc::new(forge_adapter_repomap::TreeSitterMapper::new(None)),
            files: Arc::new(FsFiles::new()),
            redactor: Redactor::new(),
            build_cache: None,
        },
    );
    let provider = ProviderId::new("echo").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut tasks, mut agents, mut steps, mut overheads) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        // The agent alone, in a scratch copy of the tree.
        let scratch = base.join(format!("scratch-{round}"));
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                scratch.to_str().unwrap(),
            ],
        );
        let t = Instant::now();
        let result =
            rt.block_on(agent.run(ExecutionRequest::new(provider.clone(), "go", &scratch)));
        let agent_ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(scratch.join("answer.txt").is_file(), "{result:?}");

        let request = TaskRequest {
            task_id: None,
            spec: TaskSpec::new("Write the answer"),
            repo: repo.display().to_string(),
            run_template: ExecutionRequest::new(provider.clone(), "", &repo),
            branch: None,
            provider: provider.clone(),
            model: None,
            fix_model: None,
            validation: ValidationConfig {
                test: Some("true".into()),
                ..ValidationConfig::default()
            },
            worktree_root: None,
            cache_dir: base.join("cache"),
            env: Default::default(),
            session_travel: Default::default(),
        };
        let t = Instant::now();
        let outcome = rt
            .block_on(pipeline.run(request, None, TaskPipeline::canceller()))
            .unwrap();
        let task_ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(outcome.stop_reason, StopReason::Validated, "{outcome:?}");
        let step_ms: u64 = outcome
            .baseline
            .iter()
            .chain(outcome.cycles.iter().filter_map(|c| c.validation.as_ref()))
            .flat_map(|v| v.steps.iter().map(|s| s.duration_ms))
            .sum();
        #[expect(clippy::cast_precision_loss, reason = "milliseconds")]
        let step_ms = step_ms as f64;
        tasks.push(task_ms);
        agents.push(agent_ms);
        steps.push(step_ms);
        overheads.push(task_ms - agent_ms - step_ms);
    }
    let overhead = median(overheads);
    println!(
        "task: median of {ROUNDS}: task {:.0} ms = agent {:.0} ms + validation steps {:.0} ms + pipeline overhead {overhead:.0} ms (target < 300 ms) {}",
        median(tasks),
        median(agents),
        median(steps),
        if overhead < 300.0 {
            "ok"
        } else {
            "OVER TARGET"
        }
    );
}
