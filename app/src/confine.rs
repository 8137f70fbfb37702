//! The confinement of each thing the agent runs (issue 31): set here, where the run is known,
//! carried by its `Invocation`, enforced by the sandbox adapter around the process runner.

use std::path::{Path, PathBuf};

use forge_domain::sandbox::{
    Confinement, RunNetwork, TOOLCHAIN_CACHES_IN_HOME, WorkTreeAccess, cli_state_in_home,
    mcp_endpoint, model_wiring, paths_named, provider_credentials,
};
use forge_domain::{ExecutionRequest, PermissionMode};
use forge_ports::{Invocation, InvocationContext};

/// The agent's CLI: its work tree (read-only for a plan/review run), its private home when
/// it has one, else its own state in the user's home, and its credential variables.
pub fn agent(
    invocation: Invocation,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
    provider: &str,
) -> Invocation {
    let mut confinement = Confinement::work_tree(&request.workdir);
    if request.permission_mode == Some(PermissionMode::Plan) {
        confinement.access = WorkTreeAccess::ReadOnly;
    }
    let program = invocation
        .program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // By the provider's name, else the program's (an ACP agent under the user's name).
    let by_name = |rule: fn(&str) -> &'static [&'static str]| match rule(provider) {
        [] => rule(&program),
        found => found,
    };
    match &ctx.home {
        Some(home) => confinement = confinement.with_writable(home),
        None => {
            confinement.user_state = by_name(cli_state_in_home).iter().map(Into::into).collect();
        }
    }
    confinement.cli_state_from_env = true;
    confinement.credentials = by_name(provider_credentials)
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    confinement.network = run_network(ctx, provider, &program);
    // What its configuration names outside the usual places (an ACP agent's
    // `CLAUDE_CODE_EXECUTABLE` under /tmp, a `--settings` file): readable inside.
    let program_path = invocation.program.to_string_lossy().into_owned();
    confinement.config_reads = paths_named(
        std::iter::once(program_path.as_str())
            .chain(invocation.args.iter().map(String::as_str))
            .chain(invocation.env.set.values().map(String::as_str)),
    );
    invocation.confined(confinement)
}

/// What the agent reaches besides `[sandbox] allow_hosts`: its model, wired as its CLI is
/// (by the provider's name, else the program's), and forge's MCP server for the run.
fn run_network(ctx: &InvocationContext, provider: &str, program: &str) -> RunNetwork {
    RunNetwork {
        model: model_wiring(provider).or_else(|| model_wiring(program)),
        mcp: ctx.mcp.as_ref().and_then(|m| mcp_endpoint(&m.url)),
    }
}

/// Code the agent wrote or asked for, run by forge in the work tree (validation and install
/// steps, MCP command tools, ACP terminals): the same walls, plus `writable` (a build cache)
/// and the package caches of the user's toolchains.
pub fn code(invocation: Invocation, work_tree: &Path, writable: &[PathBuf]) -> Invocation {
    let mut confinement = writable
        .iter()
        .fold(Confinement::work_tree(work_tree), |c, dir| {
            c.with_writable(dir)
        });
    confinement.user_state = TOOLCHAIN_CACHES_IN_HOME.iter().map(Into::into).collect();
    confinement.caches_from_env = true;
    invocation.confined(confinement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::{ProviderId, RunId};

    #[test]
    fn what_an_agents_configuration_names_is_read_where_it_lies() {
        let mut invocation = Invocation::new(
            "/tmp/clis/node_modules/.bin/claude-agent-acp",
            vec!["--settings=/tmp/s.json".into(), "--acp".into()],
            "/w",
        );
        let env = &mut invocation.env.set;
        env.insert(
            "CLAUDE_CODE_EXECUTABLE".into(),
            "/tmp/clis/node_modules/.bin/claude".into(),
        );
        env.insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:4100".into());
        env.insert("IS_SANDBOX".into(), "1".into());
        let request = ExecutionRequest::new(ProviderId::new("claude-acp").unwrap(), "hi", "/w");
        let ctx = InvocationContext {
            run_id: RunId::new("r1").unwrap(),
            run_dir: "/w/.forgecode/runs/r1".into(),
            home: None,
            in_repository: None,
            resumed_usage: None,
            mcp: None,
        };
        let agent = agent(invocation.clone(), &request, &ctx, "claude-acp");
        let reads = agent.confinement.unwrap().config_reads;
        let want: Vec<PathBuf> = [
            "/tmp/clis/node_modules/.bin/claude-agent-acp",
            "/tmp/s.json",
            "/tmp/clis/node_modules/.bin/claude",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(reads, want);
        // Code the agent runs names nothing of the agent's configuration.
        let step = code(invocation, Path::new("/w"), &[]);
        assert!(step.confinement.unwrap().config_reads.is_empty());
    }
}
