//! The `cases` group: every built-in fake-model scenario × provider through
//! `forge-code-agent run --json`.
//!
//! One `fake-model serve` per scenario (the server keeps the providers' conversations
//! apart); each case gets `<work>/<scenario>/<provider>/ws` with a `forge.toml` pointing the
//! provider at it ([`forge_cli::offline`]), `--jobs` cases at a time; the `ExecutionResult`,
//! the workspace and the artifact bundle are checked ([`super::check`]). `--record` also
//! refreshes `adapters/testkit/fixtures/` from the passing runs ([`super::record`]).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context;
use forge_adapter_fakemodel::Scenario;
use forge_cli::offline::PinnedCli;

use super::case_run::{CaseDir, Run, Suite, prepare, run_forge};
use super::cases::{self, Expect};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, check, pool, record, say};

/// The scenarios `-s` picks from: every built-in one.
pub fn names() -> Vec<&'static str> {
    cases::all().iter().map(|e| e.scenario).collect()
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let suite = Suite {
        capture: ctx.record,
        ..ctx.suite.clone()
    };
    let expects: Vec<Expect> = cases::all()
        .into_iter()
        .filter(|e| ctx.scenarios.contains(&e.scenario))
        .collect();
    run_expects(&suite, &ctx.root, &expects, &ctx.providers, ctx.jobs)
}

/// `expects` × `providers`, `jobs` at a time.
pub fn run_expects(
    suite: &Suite,
    root: &Path,
    expects: &[Expect],
    providers: &[&'static str],
    jobs: usize,
) -> anyhow::Result<Vec<Verdict>> {
    let mut servers = BTreeMap::new();
    for expect in expects {
        let log = suite
            .work
            .join(format!("{}.requests.jsonl", expect.scenario));
        let server = ServerProcess::start(&suite.forge, expect.scenario, &log)?;
        servers.insert(expect.scenario, server);
    }
    let mut queue: VecDeque<(Expect, &'static str)> = VecDeque::new();
    for expect in expects {
        for provider in providers {
            queue.push_back((expect.clone(), provider));
        }
    }
    // The slowest cases first, so they do not trail at the end.
    queue.make_contiguous().sort_by_key(|(e, p)| {
        std::cmp::Reverse((e.ending == cases::Ending::ClearError, *p == "gemini"))
    });
    let verdicts = pool::run_all(
        "cases",
        Vec::from(queue),
        jobs,
        |(expect, provider)| match servers.get(expect.scenario) {
            Some(server) => run_case(suite, root, &expect, provider, server),
            None => Verdict::of(
                expect.scenario,
                provider,
                Err(anyhow::anyhow!("no fake model for the case")),
            ),
        },
    );
    drop(servers);
    Ok(verdicts)
}

fn run_case(
    suite: &Suite,
    root: &Path,
    expect: &Expect,
    provider: &'static str,
    server: &ServerProcess,
) -> Verdict {
    let mut verdict = Verdict {
        status: "-".into(),
        ..Verdict::new(expect.scenario, provider)
    };
    let scenario = Scenario::builtin(expect.scenario).ok();
    let prompts = scenario
        .as_ref()
        .map(|s| s.prompts.clone())
        .unwrap_or_default();
    let description = scenario
        .as_ref()
        .and_then(|s| s.description.clone())
        .unwrap_or_default();
    let case = match prepare(suite, expect, provider, &server.base_url) {
        Ok(case) => case,
        Err(e) => {
            verdict.failures.push(format!("setup: {e:#}"));
            return verdict;
        }
    };
    let mut prompt = prompts.first().cloned().unwrap_or_default();
    let mut last = match run_forge(suite, &case, &prompt, None, expect.timeout) {
        Ok(run) => run,
        Err(e) => {
            verdict.failures.push(format!("run: {e:#}"));
            return verdict;
        }
    };
    verdict.seconds = last.seconds;
    verdict.failures = check::run(expect, provider, &last, expect.text, &case.workspace);
    if let Some(resume_text) = expect.resume_text {
        let first_session = last.str_at("/metadata/session_id").map(str::to_owned);
        prompt = prompts.get(1).cloned().unwrap_or_default();
        match first_session {
            None => verdict
                .failures
                .push("resume: the first run has no session id".into()),
            Some(session) => match run_forge(suite, &case, &prompt, Some(&session), expect.timeout)
            {
                Ok(second) => {
                    verdict.seconds += second.seconds;
                    for f in check::run(
                        expect,
                        provider,
                        &second,
                        Some(resume_text),
                        &case.workspace,
                    ) {
                        verdict.failures.push(format!("resumed run: {f}"));
                    }
                    let again = second.str_at("/metadata/session_id");
                    if provider != "gemini" && again != Some(session.as_str()) {
                        verdict.failures.push(format!(
                            "resumed run: session {again:?}, expected {session:?}"
                        ));
                    }
                    last = second;
                }
                Err(e) => verdict.failures.push(format!("resumed run: {e:#}")),
            },
        }
    }
    verdict.status = status_of(&last);
    if suite.capture && verdict.passed() && expect.ending == cases::Ending::Success {
        let recorded = record_case(
            root,
            expect,
            provider,
            &prompt,
            &description,
            &case,
            &last,
            server,
            suite,
        );
        match recorded {
            Ok(Some(path)) => verdict.note = format!("recorded {}", path.display()),
            Ok(None) => {}
            Err(e) => say(&format!("record {}/{provider}: {e:#}", expect.scenario)),
        }
    }
    verdict
}

#[expect(
    clippy::too_many_arguments,
    reason = "a flat hand-off of one case's facts"
)]
fn record_case(
    root: &Path,
    expect: &Expect,
    provider: &str,
    prompt: &str,
    description: &str,
    case: &CaseDir,
    run: &Run,
    server: &ServerProcess,
    suite: &Suite,
) -> anyhow::Result<Option<PathBuf>> {
    let cli = PinnedCli::of(provider).context("unknown provider")?;
    if record::adapter_keeps_own(root, &cli, expect.scenario) {
        return Ok(None);
    }
    let rec = record::Recording {
        expect,
        provider,
        prompt,
        description,
        case,
        run,
        port: server.port(),
        clis: &suite.clis,
    };
    record::write(root, &rec).map(Some)
}

/// `success` / `error` / `partial`, or `timeout` when forge stopped the run (exit 124).
fn status_of(run: &Run) -> String {
    if run.exit == Some(124) {
        return "timeout".into();
    }
    run.str_at("/status").unwrap_or("no result").to_owned()
}
