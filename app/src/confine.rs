//! The confinement of each thing the agent runs (issue 31): set here, where the run is known,
//! carried by its `Invocation`, enforced by the sandbox adapter around the process runner.

use std::path::{Path, PathBuf};

use forge_domain::sandbox::{
    Confinement, RunNetwork, TOOLCHAIN_CACHES_IN_HOME, WorkTreeAccess, cli_state_in_home,
    mcp_endpoint, model_wiring, provider_credentials,
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
    invocation.confined(confinement)
}
