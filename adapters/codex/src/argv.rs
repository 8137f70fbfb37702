//! Request → `codex exec --json … -` invocation.
//!
//! Shape (checked against `codex exec --help` and `codex exec resume --help`, 0.169):
//! `codex exec --json [exec flags] [settings.args] [extra_args] [resume <thread_id>] -`.
//! Every flag goes before `resume`, as the official TypeScript SDK does: `--sandbox`, `-C` and
//! `--add-dir` exist only at the `exec` level. The prompt is always `-` with the bytes on stdin,
//! which the runner closes after writing; with a prompt in argv and a stdin pipe left open,
//! `codex exec` appends stdin as a `<stdin>` block and waits for EOF forever.

use std::collections::BTreeMap;
use std::path::Path;

use forge_domain::{ExecutionRequest, ForgeError, PermissionMode};
use forge_ports::{EnvSpec, Invocation, InvocationContext, ProviderSettings};

use crate::features::CliFeatures;
use crate::home::{self, CODEX_HOME_ENV, toml_string};

/// How a person installs the CLI.
pub const INSTALL_HINT: &str = "npm i -g @openai/codex";

/// The binary name looked up on PATH when settings name none.
pub const DEFAULT_BINARY: &str = "codex";

/// Older releases without `-` on stdin get the prompt as an argument up to this size.
const MAX_ARGV_PROMPT: usize = 8 * 1024;

/// Builds the invocation for `request`.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when the request needs something Codex lacks and dropping
/// it would change the run (a turn or budget limit, tool allow/deny lists, an MCP config) or
/// something this Codex release lacks (resume, `--add-dir`, `--output-schema`).
pub fn build_invocation(
    settings: &ProviderSettings,
    features: CliFeatures,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> Result<Invocation, ForgeError> {
    refuse_unsupported(features, request)?;

    let mut args: Vec<String> = vec!["exec".into(), "--json".into()];
    if ctx.in_repository != Some(true) && features.skip_git_repo_check {
        // Outside a git repo (or a trusted dir) codex exits 1 before doing anything.
        args.push("--skip-git-repo-check".into());
    }
    push_permission_flags(&mut args, request.permission_mode);
    if let Some(model) = request.model.as_ref().or(settings.model.as_ref()) {
        args.extend(["-m".into(), model.clone()]);
    }
    args.extend(["-C".into(), path_arg(&request.workdir)]);
    for dir in &request.add_dirs {
        args.extend(["--add-dir".into(), path_arg(dir)]);
    }
    if let Some(schema) = &request.output_schema {
        args.extend(["--output-schema".into(), path_arg(schema)]);
    }
    if let Some(extra) = &request.append_system_prompt {
        // Codex appends `developer_instructions` to its built-in instructions.
        args.extend([
            "-c".into(),
            format!("developer_instructions={}", toml_string(extra)),
        ]);
    }
    let forge_tools = crate::mcp::args_and_env(ctx);
    if let Some((mcp_args, _)) = &forge_tools {
        args.extend(mcp_args.iter().cloned());
    }
    args.extend(settings.args.iter().cloned());
    args.extend(request.extra_args.iter().cloned());
    if let Some(thread) = &request.resume_session_id {
        args.extend(["resume".into(), thread.as_str().to_owned()]);
    }

    let stdin = if features.prompt_dash_reads_stdin || request.prompt.len() > MAX_ARGV_PROMPT {
        args.push("-".into());
        request.prompt.as_bytes().to_vec()
    } else {
        args.push(request.prompt.clone());
        Vec::new()
    };

    let program = settings
        .binary
        .clone()
        .unwrap_or_else(|| DEFAULT_BINARY.into());
    let mut invocation = Invocation::new(program, args, request.workdir.clone());
    // Always Some: an empty payload still means "stdin is a pipe, closed at once".
    invocation.stdin = Some(stdin);
    invocation.install_hint = Some(INSTALL_HINT.to_owned());
    invocation.env = env_for(settings, request, ctx);
    if let Some((_, (key, token))) = forge_tools {
        invocation.env.set.insert(key, token);
    }
    if let Some(run_home) = &ctx.home {
        // A configured home is the caller's (pre-created, e.g. by the e2e harness): as is.
        let is_private = settings.home.as_deref() != Some(run_home.as_path());
        if is_private {
            invocation.files =
                home::private_home_files(&home::codex_home_in(run_home), settings.copy_user_auth);
        }
    }
    Ok(invocation)
}

/// forge's permission modes → Codex sandbox flags. `codex exec` is headless and already
/// defaults to `approval_policy = never` (it never waits for a person); the modes below pin
/// the policy where a user config could otherwise change it.
fn push_permission_flags(args: &mut Vec<String>, mode: Option<PermissionMode>) {
    match mode {
        // The CLI's own default: no flag, so the user's `sandbox_mode` in config.toml applies
        // (Codex documents read-only for `exec`, workspace-write once a project is trusted).
        // Passing read-only here would make `default` the same as `plan`.
        // `ask` is refused before (`refuse_unsupported`).
        None | Some(PermissionMode::Default | PermissionMode::Ask) => {}
        // Edits inside the workspace (and --add-dir roots) without asking; shell commands
        // run in the same sandbox, and anything needing escalation fails instead of asking.
        Some(PermissionMode::AcceptEdits) => {
            args.extend(["--sandbox".into(), "workspace-write".into()]);
            args.extend(["-c".into(), "approval_policy=\"never\"".into()]);
        }
        Some(PermissionMode::Bypass) => {
            args.push("--dangerously-bypass-approvals-and-sandbox".into());
        }
        Some(PermissionMode::Plan) => {
            args.extend(["--sandbox".into(), "read-only".into()]);
            args.extend(["-c".into(), "approval_policy=\"never\"".into()]);
        }
    }
}

fn refuse_unsupported(features: CliFeatures, request: &ExecutionRequest) -> Result<(), ForgeError> {
    let refuse = |what: &str| ForgeError::InvalidRequest {
        reason: format!("codex {what}"),
    };
    if !features.thread_item_json {
        return Err(refuse(
            "releases this old print the legacy json protocol: upgrade codex (npm i -g @openai/codex)",
        ));
    }
    if request.permission_mode == Some(PermissionMode::Ask) {
        return Err(ForgeError::InvalidRequest {
            reason: forge_domain::permission::ask_refusal("codex").unwrap_or_default(),
        });
    }
    if request.max_turns.is_some() {
        return Err(refuse("has no max-turns limit"));
    }
    if request.max_budget_usd.is_some() {
        return Err(refuse("has no budget limit"));
    }
    if !request.allowed_tools.is_empty() || !request.disallowed_tools.is_empty() {
        return Err(refuse(
            "has no tool allow/deny lists (use a permission mode)",
        ));
    }
    if request.mcp_config.is_some() {
        return Err(refuse(
            "reads mcp servers from config.toml only (no --mcp-config flag)",
        ));
    }
    if request.resume_session_id.is_some() && !features.exec_resume {
        return Err(refuse("release has no `exec resume`"));
    }
    if !request.add_dirs.is_empty() && !features.add_dir {
        return Err(refuse("release has no --add-dir"));
    }
    if request.output_schema.is_some() && !features.output_schema {
        return Err(refuse("release has no --output-schema"));
    }
    if request.append_system_prompt.is_some() && !features.developer_instructions {
        return Err(refuse("release has no developer_instructions setting"));
    }
    Ok(())
}

/// Inherited environment + settings.env, then `CODEX_HOME` for a run home, then the
/// request's env (which wins: a caller naming `CODEX_HOME` means it).
fn env_for(
    settings: &ProviderSettings,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> EnvSpec {
    let mut set: BTreeMap<String, String> = settings.env.clone();
    if let Some(run_home) = &ctx.home {
        // Only CODEX_HOME: HOME stays the user's, so the agent's shell commands see their
        // usual environment (git config, tool caches).
        set.insert(
            CODEX_HOME_ENV.to_owned(),
            path_arg(&home::codex_home_in(run_home)),
        );
    }
    set.extend(request.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    EnvSpec {
        inherit: true,
        set,
        remove: Vec::new(),
    }
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
