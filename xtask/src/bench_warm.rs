//! `cargo xtask bench --warm` (issue 28): a task's baseline in a new work tree against the
//! same commands in the user's warm checkout, measured in one run, for a cargo repository
//! (dtolnay/semver by default: its source from cargo's registry, made a git repository),
//! a Node project and a Python project.
//!
//! Per project: `cold` (the user's first build in the checkout), `warm` (the validation
//! checks again in the checkout, median of 3), two `task run`s with claude against the fake model (the
//! agent changes nothing; the baseline's checks are timed by forge itself and each names
//! its cache), then the checkout's checks once more (`after`, median of 3). Targets (cargo):
//! task 1 ≤ cold / 4, task 2 ≤ 1.2 × warm + 1 s, after ≤ 1.2 × warm; the checkout's
//! `git status` empty.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::e2e::warm::{self, Offline, TaskRun};
use crate::e2e::{self, Suite, say};

const PROVIDER: &str = "claude";

struct Project {
    name: &'static str,
    /// The user's first build (and install) in the checkout.
    cold: &'static str,
    /// The validation checks forge detects, as the user runs them.
    checks: &'static str,
}

const NODE_PACKAGE: &str = r#"{
  "name": "warm-node",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node test.js" },
  "dependencies": { "semver": "7.6.3", "chalk": "4.1.2", "lodash": "4.17.21" }
}
"#;
const NODE_TEST: &str = "const semver = require('semver');\nconst chalk = require('chalk');\nif (!semver.satisfies('1.2.3', '^1.0.0')) { process.exit(1); }\nconsole.log(chalk.green('ok'));\n";
const PY_PROJECT: &str = "[project]\nname = \"warm-py\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";
const PY_TEST: &str = "def test_answer():\n    assert 6 * 7 == 42\n";

pub fn run(root: &Path, repo: Option<&Path>) -> anyhow::Result<()> {
    // The debug build: what is measured is validation, not forge's own speed.
    let suite = e2e::setup(root, false, "bench-warm", false)?;
    // Outside forge's own workspace: cargo must see the repository as the user does.
    let work = std::env::temp_dir().join("forge-bench-warm");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let rows = vec![
        cargo_project(&suite, root, &work, repo)?,
        node_project(&suite, root, &work)?,
        python_project(&suite, root, &work)?,
    ];
    let mut out = String::from(
        "\nwarm validation: a task's baseline in a new work tree vs the user's checkout (seconds)\n",
    );
    out.push_str(&format!(
        "{:<8} {:>7} {:>7} {:>8} {:>8} {:>7} {:>10} {:>10} {:>10}  {}\n",
        "project",
        "cold",
        "warm",
        "task 1",
        "task 2",
        "after",
        "t1/cold",
        "t2/warm",
        "after/warm",
        "status"
    ));
    for r in &rows {
        out.push_str(&format!(
            "{:<8} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>7.2} {:>10.3} {:>10.2} {:>10.2}  {}\n",
            r.name,
            r.cold,
            r.warm,
            r.first.baseline_s(),
            r.second.baseline_s(),
            r.after,
            r.first.baseline_s() / r.cold,
            r.second.baseline_s() / r.warm,
            r.after / r.warm,
            if r.clean {
                "git status clean"
            } else {
                "git status NOT clean"
            }
        ));
    }
    out.push_str("\ncaches per baseline step:\n");
    for r in &rows {
        out.push_str(&format!(
            "{:<8} task 1 ({:.1}s wall): {}\n{:<8} task 2 ({:.1}s wall): {}\n",
            r.name,
            r.first.wall_s,
            r.first.notes(),
            "",
            r.second.wall_s,
            r.second.notes()
        ));
    }
    if let Some(cargo) = rows.first() {
        let t1 = cargo.first.baseline_s() <= cargo.cold / 4.0;
        let t2 = cargo.second.baseline_s() <= 1.2 * cargo.warm + 1.0;
        let after = cargo.after <= 1.2 * cargo.warm;
        out.push_str(&format!(
            "\ntargets ({}): task 1 ≤ cold/4: {}; task 2 ≤ 1.2×warm + 1 s: {}; after ≤ 1.2×warm: {}; checkout clean: {}\n",
            cargo.name,
            verdict(t1),
            verdict(t2),
            verdict(after),
            verdict(cargo.clean)
        ));
        out.push_str("task 1 / task 2: the baseline's checks as forge timed them (report.json); wall: the whole `task run` (CLI start-up included)\n");
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

struct Row {
    name: &'static str,
    cold: f64,
    warm: f64,
    first: TaskRun,
    second: TaskRun,
    after: f64,
    clean: bool,
}

fn measure(
    suite: &Suite,
    offline: &Offline,
    dir: &Path,
    project: &Project,
    repo: &Path,
    env: &BTreeMap<String, String>,
) -> anyhow::Result<Row> {
    say(&format!(
        "bench warm {}: cold build in the checkout",
        project.name
    ));
    let cold = warm::timed(repo, project.cold, env)?;
    let warm_s = median_of_3(repo, project.checks, env)?;
    let cache_home = dir.join("cache");
    say(&format!("bench warm {}: task 1", project.name));
    let first = warm::task_run(suite, repo, PROVIDER, offline, &cache_home)?;
    say(&format!("bench warm {}: task 2", project.name));
    let second = warm::task_run(suite, repo, PROVIDER, offline, &cache_home)?;
    for run in [&first, &second] {
        if run.baseline.is_empty() {
            bail!(
                "{}: the task ran no baseline: {}",
                project.name,
                warm::tail(&run.report.to_string())
            );
        }
    }
    let after = median_of_3(repo, project.checks, env)?;
    let clean = warm::git(repo, &["status", "--porcelain"])?
        .trim()
        .is_empty();
    Ok(Row {
        name: project.name,
        cold,
        warm: warm_s,
        first,
        second,
        after,
        clean,
    })
}

/// The median of three timings: a busy machine makes single sub-second timings noisy.
fn median_of_3(repo: &Path, script: &str, env: &BTreeMap<String, String>) -> anyhow::Result<f64> {
    let mut times = [
        warm::timed(repo, script, env)?,
        warm::timed(repo, script, env)?,
        warm::timed(repo, script, env)?,
    ];
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}

/// The checkout: `repo` when given (a git repository), else semver's source from cargo's
/// registry made one. `forge.toml` (the offline provider) is committed on top.
fn cargo_project(
    suite: &Suite,
    root: &Path,
    work: &Path,
    repo: Option<&Path>,
) -> anyhow::Result<Row> {
    let checkout = work.join("semver");
    match repo {
        Some(path) => {
            let status = std::process::Command::new("git")
                .args(["clone", "-q"])
                .arg(path)
                .arg(&checkout)
                .status()?;
            if !status.success() {
                bail!("git clone {} failed", path.display());
            }
        }
        None => semver_checkout(&checkout)?,
    }
    let dir = work.join("semver-forge");
    std::fs::create_dir_all(&dir)?;
    let offline = warm::offline(suite, root, &dir, PROVIDER)?;
    std::fs::write(checkout.join("forge.toml"), &offline.toml)?;
    warm::git(&checkout, &["add", "-A"])?;
    warm::git(&checkout, &["commit", "-q", "-m", "bench checkout"])?;
    let project = Project {
        name: "cargo",
        cold: "cargo build --all-targets && cargo test",
        checks: "cargo build --all-targets && cargo test",
    };
    measure(
        suite,
        &offline,
        &dir,
        &project,
        &checkout,
        &warm::toolchain_env(),
    )
}

/// semver's source from cargo's registry, made a git repository at `checkout` (nothing
/// committed yet).
pub fn semver_checkout(checkout: &Path) -> anyhow::Result<()> {
    let source = semver_source()?;
    copy_dir(&source, checkout)?;
    std::fs::write(checkout.join(".gitignore"), "/target/\n/Cargo.lock\n")?;
    warm::git(checkout, &["init", "-q", "-b", "main"])?;
    Ok(())
}

fn semver_source() -> anyhow::Result<PathBuf> {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
        });
    let src = home.join("registry/src");
    for index in std::fs::read_dir(&src).with_context(|| src.display().to_string())? {
        let index = index?.path();
        let mut found: Vec<PathBuf> = std::fs::read_dir(&index)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("semver-1."))
            })
            .collect();
        found.sort();
        if let Some(last) = found.pop() {
            return Ok(last);
        }
    }
    bail!("no semver-1.* in {} (pass --warm-repo)", src.display())
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry?;
        let target = to.join(entry.path().strip_prefix(from)?);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn node_project(suite: &Suite, root: &Path, work: &Path) -> anyhow::Result<Row> {
    let checkout = work.join("node");
    std::fs::create_dir_all(&checkout)?;
    let dir = work.join("node-forge");
    std::fs::create_dir_all(&dir)?;
    let offline = warm::offline(suite, root, &dir, PROVIDER)?;
    let toml = offline.toml.clone();
    std::fs::write(checkout.join("package.json"), NODE_PACKAGE)?;
    let mut env = warm::toolchain_env();
    // The user's first install starts from an empty npm cache: a cold build.
    env.insert(
        "npm_config_cache".into(),
        work.join("npm-cache").display().to_string(),
    );
    warm::timed(&checkout, "npm install --package-lock-only --silent", &env)?;
    warm::make_repo_in_place(
        &checkout,
        &[
            ("test.js", NODE_TEST),
            (".gitignore", "/node_modules/\n"),
            ("forge.toml", &toml),
        ],
    )?;
    let project = Project {
        name: "node",
        cold: "npm ci --silent && npm run test --silent",
        checks: "npm run test --silent",
    };
    measure(suite, &offline, &dir, &project, &checkout, &env)
}

fn python_project(suite: &Suite, root: &Path, work: &Path) -> anyhow::Result<Row> {
    let checkout = work.join("python");
    std::fs::create_dir_all(&checkout)?;
    let dir = work.join("python-forge");
    std::fs::create_dir_all(&dir)?;
    let offline = warm::offline(suite, root, &dir, PROVIDER)?;
    let toml = offline.toml.clone();
    warm::make_repo_in_place(
        &checkout,
        &[
            ("pyproject.toml", PY_PROJECT),
            ("requirements.txt", "pytest==8.3.4\n"),
            ("tests/test_answer.py", PY_TEST),
            (".gitignore", "/.venv/\n__pycache__/\n/.pytest_cache/\n"),
            ("forge.toml", &toml),
        ],
    )?;
    let env = warm::toolchain_env();
    let project = Project {
        name: "python",
        cold: "python3 -m venv .venv && .venv/bin/python -m pip install -q -r requirements.txt && .venv/bin/python -m pytest -q",
        checks: ".venv/bin/python -m pytest -q",
    };
    measure(suite, &offline, &dir, &project, &checkout, &env)
}
