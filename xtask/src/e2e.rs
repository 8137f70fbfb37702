//! `cargo xtask e2e`: forge through the real pinned claude, codex and gemini against the
//! project's fake model, offline, in groups.
//!
//! [`GROUPS`] is the one list of what the suite runs: each group lives in its own file, says
//! which scenarios `-s` can pick inside it, and hands back a [`Verdict`] per case × provider.
//! The suite is set up once ([`setup`]: the pinned CLIs installed into `target/e2e/clis`,
//! `forge-code-agent` built, `target/e2e/work` cleared); each group then runs in
//! `target/e2e/work/<group>`, prints its table, and the summary closes the run.
//!
//! Selection: `--group` names groups; `-s` narrows the scenarios of the groups that have
//! some and, without `--group`, picks the groups owning those names (a group's own name
//! stands for all of its scenarios); `-p` narrows the providers of every group.

pub mod acp;
mod acp_surfaces;
pub mod api;
pub mod auto;
pub mod capture;
pub mod case_run;
pub mod cases;
mod check;
pub mod delivery;
mod demo;
mod gitlab;
mod gitlab_feedback;
mod install;
pub mod latest;
mod mcp;
mod mcp_own_home;
mod permissions;
mod permissions_board;
mod permissions_queue;
mod permissions_surfaces;
mod poll;
mod pool;
mod pulls;
mod pulls_env;
mod pulls_followups;
mod pulls_hooks;
mod queue;
mod queue_approvals;
mod queue_repo;
mod queue_serve;
mod rate_limit;
mod receiver;
mod record;
mod resume_cost;
mod retry_events;
mod review;
mod sandbox;
mod sandbox_acp;
mod sandbox_registry;
mod sandbox_task;
mod scenarios;
mod select;
mod server;
pub(crate) use server::listening_on;
mod summary;
pub mod task;
mod travel;
pub mod warm;
pub mod web;
mod web_board;
mod web_volume;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

pub use case_run::{CaseDir, Suite, isolate_env, prepare, run_forge};
pub use cases::PROVIDERS;
pub use server::ServerProcess;
pub use summary::Verdict;

use crate::workspace_root;

#[derive(Debug, Clone, clap::Args)]
pub struct E2eArgs {
    /// Only this group (repeatable; `--list` shows them) [default: every group, or the
    /// groups owning the -s names]
    #[arg(long, short = 'g', value_name = "G")]
    pub group: Vec<String>,
    /// Only this scenario (repeatable): narrows the groups that have scenarios and, without
    /// --group, runs only the groups owning it; a group's name means all its scenarios
    #[arg(long, short = 's', value_name = "S")]
    pub scenario: Vec<String>,
    /// Only this provider (repeatable), in every group: claude, codex, gemini
    #[arg(long, short = 'p', value_name = "P")]
    pub provider: Vec<String>,
    /// Print the groups (those selected, or all) and their scenarios; run nothing
    #[arg(long)]
    pub list: bool,
    /// Cases run at the same time
    #[arg(long, short = 'j', value_name = "N", default_value_t = 4)]
    pub jobs: usize,
    /// Also refresh adapters/testkit/fixtures/<cli>/<version>/<scenario>.* from the cases
    /// group's runs
    #[arg(long)]
    pub record: bool,
    /// The drift job: run against the newest published release of every pinned CLI and ACP
    /// agent (`npm view`, installed into target/e2e/clis-latest), print their versions and,
    /// at the end, the unknown event kinds per CLI version
    #[arg(long, conflicts_with = "record")]
    pub latest: bool,
}

/// One group of the suite.
pub struct Group {
    pub name: &'static str,
    pub about: &'static str,
    /// What `-s` picks inside the group; none: the group always runs whole.
    pub scenarios: fn() -> Vec<&'static str>,
    pub run: fn(&Ctx) -> anyhow::Result<Vec<Verdict>>,
}

/// Every group, in the order they run.
pub const GROUPS: &[Group] = &[
    Group {
        name: "cases",
        about: "every built-in fake-model scenario × provider through `run --json`",
        scenarios: scenarios::names,
        run: scenarios::run,
    },
    Group {
        name: "retry_events",
        about: "a CLI's retry after a rate limit reaches forge's events as `retry`",
        scenarios: retry_events::scenarios,
        run: retry_events::run,
    },
    Group {
        name: "resume_cost",
        about: "a resumed run reports its own usage and cost, not the session's total",
        scenarios: resume_cost::scenarios,
        run: resume_cost::run,
    },
    Group {
        name: "serve",
        about: "the HTTP API: run, SSE, cancel by DELETE and by disconnect, event sink",
        scenarios: Vec::new,
        run: api::run,
    },
    Group {
        name: "web",
        about: "the web page in headless Chromium: stream, cancel, reload; serve --queue's task stream; the board (claude, codex, gemini): submit, live cards, task page, approvals, share links, serve restarted; 14 tasks on two fake-CLI workers over SQLite",
        scenarios: Vec::new,
        run: web::run,
    },
    Group {
        name: "mcp",
        about: "Rust and command tools served over MCP, called by each CLI",
        scenarios: mcp::names,
        run: mcp::run,
    },
    Group {
        name: "rate_limit",
        about: "`--on-rate-limit wait`: forge waits out a rate limit and resumes the session",
        scenarios: rate_limit::scenarios,
        run: rate_limit::run,
    },
    Group {
        name: "auto",
        about: "the autonomous loop: done, emergency stop, bad plans, max iterations, kill -9",
        scenarios: auto::names,
        run: auto::run,
    },
    Group {
        name: "task",
        about: "`task run`: correction, review fix, cost ceiling, baseline, Ctrl-C, SIGKILL",
        scenarios: task::names,
        run: task::run,
    },
    Group {
        name: "warm",
        about: "two `task run`s on a built cargo repository: cache seeded, then hit; checkout clean and warm",
        scenarios: Vec::new,
        run: warm::run,
    },
    Group {
        name: "delivery",
        about: "task delivery: commit + push + rollback, approve, reject, crash mid-approve",
        scenarios: delivery::names,
        run: delivery::run,
    },
    Group {
        name: "gitlab",
        about: "`task run --pull-request` on a GitLab remote (the contract fake): a merge request with the report; a held change as a Draft: one, ready on `approvals approve`; through serve --queue and a worker, a developer's @forge note answered by a commit of the same session and a reply in the discussion, a reporter's ignored",
        scenarios: gitlab::names,
        run: gitlab::run,
    },
    Group {
        name: "pulls",
        about: "pull requests on GitHub (the contract fake) through `serve --queue` and a worker on PostgreSQL: a task's pull request with the report; a held one a draft, ready on a writer's approving review, not a reader's; a writer's @forge review comment and a failed check come back as commits of the same session with a reply; a labelled issue becomes a pull request closing it; a forged, a replayed and a reader's webhook change nothing",
        scenarios: pulls::names,
        run: pulls::run,
    },
    Group {
        name: "poll",
        about: "`worker --poll-forge` with no serve (the GitHub contract fake): a writer's @forge review comment polled from the API comes back as a commit by the same session on the same branch and a reply; later polls act no more",
        scenarios: poll::names,
        run: poll::run,
    },
    Group {
        name: "review",
        about: "`review --base HEAD~1`: rule + agent findings, SARIF, GitHub payload, malformed, rate limit",
        scenarios: review::names,
        run: review::run,
    },
    Group {
        name: "acp",
        about: "each CLI's ACP agent as a `kind = \"acp\"` provider: text, file, shell, resume, 500, Ctrl-C; stream, task, serve",
        scenarios: acp::names,
        run: acp::run,
    },
    Group {
        name: "queue",
        about: "workers with their own HOME run a submitted task once, on PostgreSQL; a held one is approved from another HOME and delivered once",
        scenarios: queue::names,
        run: queue::run,
    },
    Group {
        name: "queue_serve",
        about: "`serve --queue`: a task run by a worker process streams over SSE, resumed by Last-Event-ID",
        scenarios: queue_serve::names,
        run: queue_serve::run,
    },
    Group {
        name: "travel",
        about: "the agent session travels with the task: worker A runs a task and stops, worker B (another HOME) takes its `task submit --follow-up` and resumes the same session, a fast-forward on the same branch",
        scenarios: travel::names,
        run: travel::run,
    },
    Group {
        name: "sandbox",
        about: "a steered agent's escapes (key, home, outside, git hook, editor task, shared /tmp, /proc environ): refused with the sandbox on, possible with --sandbox off; a steered guarded task delivered with its refusals reported; guarded tasks on a Rust crate and a Python package with a dependency fetched through the registries, corrected and committed (and the report when the registries are shut); claude-agent-acp with its claude under /tmp",
        scenarios: sandbox::names,
        run: sandbox::run,
    },
    Group {
        name: "permissions",
        about: "`--permission-mode ask` (claude, claude-agent-acp, codex-acp, gemini --acp): allow from another process runs the command, deny does not, allow_session asked once, a timeout denies once, a rule decides, a second decision exit 4 / 409, the terminal prompt under a pty, serve's API; codex and gemini CLIs refused",
        scenarios: permissions::names,
        run: permissions::run,
    },
    Group {
        name: "demo",
        about: "`forge-code-agent demo`: the README's first command, with each CLI",
        scenarios: Vec::new,
        run: demo::run,
    },
];

/// What a group runs with.
pub struct Ctx {
    /// The shared suite; `work` is the group's own `target/e2e/work/<group>`.
    pub suite: Suite,
    pub root: PathBuf,
    /// The selected providers, in table order.
    pub providers: Vec<&'static str>,
    /// The group's selected scenarios (all of them without `-s`).
    pub scenarios: Vec<&'static str>,
    pub jobs: usize,
    /// `--record`.
    pub record: bool,
}

impl Ctx {
    /// Another group's directory in this suite.
    pub fn work_of(&self, group: &str) -> PathBuf {
        self.suite.work.with_file_name(group)
    }
}

pub fn run(args: &E2eArgs) -> anyhow::Result<()> {
    let plan = select::plan(args, GROUPS)?;
    let providers = select::providers(args)?;
    if args.list {
        print(&select::list(&plan));
        return Ok(());
    }
    if plan.is_empty() {
        bail!("no group has the selected scenarios (`cargo xtask e2e --list` shows them)");
    }
    let started = Instant::now();
    let root = workspace_root();
    let clis = if args.latest {
        let newest = latest::newest()?;
        print(&latest::versions_table(&newest));
        let dir = root.join("target/e2e/clis-latest");
        latest::install(&dir, &newest)?;
        Some(dir)
    } else {
        None
    };
    let suite = setup_with(&root, false, "work", false, clis)?;
    let mut results = Vec::new();
    for (group, scenarios) in plan {
        let group_started = Instant::now();
        say(&format!("── {} ──", group.name));
        let work = suite.work.join(group.name);
        std::fs::create_dir_all(&work)?;
        let ctx = Ctx {
            suite: Suite {
                work,
                ..suite.clone()
            },
            root: root.clone(),
            providers: providers.clone(),
            scenarios,
            jobs: args.jobs.max(1),
            record: args.record,
        };
        let verdicts =
            (group.run)(&ctx).unwrap_or_else(|e| vec![Verdict::of(group.name, "-", Err(e))]);
        let result = summary::GroupResult {
            group: group.name,
            verdicts,
            seconds: group_started.elapsed().as_secs_f64(),
        };
        print(&summary::table(&result, &(group.scenarios)()));
        results.push(result);
    }
    let (text, failed) = summary::summary(&results, started.elapsed().as_secs_f64(), args.jobs);
    print(&text);
    if args.latest {
        let reported = latest::reported_versions(&suite.clis);
        print(&latest::drift_table(&latest::unknown_kinds(
            &suite.work,
            &reported,
        )));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        bail!("{} e2e case(s) failed: {}", failed.len(), failed.join(", "))
    }
}

fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Installs the CLIs, builds the binary (`release`: optimised, for measurements), and clears
/// `target/e2e/<work>`.
pub fn setup(root: &Path, capture: bool, work: &str, release: bool) -> anyhow::Result<Suite> {
    setup_with(root, capture, work, release, None)
}

/// [`setup`] with the CLIs already installed in `clis` (`--latest`), else the pinned ones.
pub fn setup_with(
    root: &Path,
    capture: bool,
    work: &str,
    release: bool,
    clis: Option<PathBuf>,
) -> anyhow::Result<Suite> {
    let e2e = root.join("target/e2e");
    let clis = match clis {
        Some(dir) => dir,
        None => {
            let dir = std::env::var_os("FORGE_E2E_CLIS_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| e2e.join("clis"));
            install::ensure(&dir)?;
            dir
        }
    };
    // Agents run in bubblewrap by default (issue 31).
    web::ensure_apt(&["bwrap"], &["bubblewrap"])?;
    let mut build = vec!["build", "-p", "forge-cli"];
    if release {
        build.push("--release");
    }
    say(&format!("cargo {}", build.join(" ")));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(&build)
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo {} failed ({status})", build.join(" "));
    }
    let work = e2e.join(work);
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work)?;
    let empty_config = e2e.join("empty-user-config.toml");
    std::fs::write(&empty_config, "")?;
    let home = work.join("user-home");
    std::fs::create_dir_all(&home)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(Suite {
        forge: target
            .join(if release { "release" } else { "debug" })
            .join("forge-code-agent"),
        clis,
        work,
        empty_config,
        home,
        capture,
    })
}

/// Progress on stderr.
pub fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "e2e: {text}");
}
