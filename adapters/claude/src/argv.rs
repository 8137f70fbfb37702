//! `ExecutionRequest` → the `claude` invocation: argv, environment, stdin and home files.
//!
//! The prompt always goes on stdin (`-p` with no positional prompt reads it): long prompts
//! overflow argv, and a closed stdin also spares the CLI's 3 s wait for piped input.

use std::path::PathBuf;

use forge_domain::{ExecutionMode, ExecutionRequest, ForgeError, PermissionMode};
use forge_ports::{EnvSpec, Invocation, InvocationContext, ProviderSettings};

use crate::hints;
use crate::home::{self, UserPaths};

/// The binary looked up on PATH when settings name none (the CLI maps `CLAUDE_CLI_PATH`
/// onto `settings.binary`).
pub const DEFAULT_BINARY: &str = "claude";

/// Set on every run unless settings or the request set them otherwise: no self-update in
/// the middle of a run, no telemetry or other background traffic besides the model calls.
const DEFAULT_ENV: [(&str, &str); 2] = [
    ("DISABLE_AUTOUPDATER", "1"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
];

/// Removed from the inherited environment: set inside a Claude Code session, it would make
/// the child believe it runs nested in its parent (the official SDKs strip it too).
const REMOVED_ENV: [&str; 1] = ["CLAUDECODE"];

/// Builds the invocation. Order: fixed headless flags, request options, `settings.args`,
/// then `request.extra_args` (last, so they can override).
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for a request claude cannot honour as asked (a structured
/// output schema, a budget that is not a positive number).
pub fn build(
    settings: &ProviderSettings,
    user: &UserPaths,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> Result<Invocation, ForgeError> {
    if request.output_schema.is_some() {
        return Err(ForgeError::InvalidRequest {
            reason: "the claude provider does not support output_schema (claude takes an inline \
                     schema: pass --json-schema through extra_args)"
                .to_owned(),
        });
    }
    let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .map(str::to_owned)
        .to_vec();
    // A streaming caller wants text as it is generated, not block by block; the decoder
    // drops the whole blocks that repeat the deltas, so content is not doubled.
    if request.mode == ExecutionMode::Stream
        && !request
            .extra_args
            .iter()
            .any(|a| a == "--include-partial-messages")
    {
        args.push("--include-partial-messages".to_owned());
    }
    if let Some(model) = request.model.as_ref().or(settings.model.as_ref()) {
        push(&mut args, "--model", model.clone());
    }
    if let Some(turns) = request.max_turns {
        push(&mut args, "--max-turns", turns.to_string());
    }
    if let Some(budget) = request.max_budget_usd {
        if !(budget.is_finite() && budget > 0.0) {
            return Err(ForgeError::InvalidRequest {
                reason: format!("max_budget_usd must be a positive number, got {budget}"),
            });
        }
        push(&mut args, "--max-budget-usd", budget.to_string());
    }
    // One comma-separated value, as the official SDKs pass it (claude splits on commas).
    let mut allowed = request.allowed_tools.clone();
    let forge_tools = crate::mcp::args_and_file(request, ctx);
    if forge_tools.is_some() {
        allowed.push(crate::mcp::allowed_tools_entry());
    }
    if !allowed.is_empty() {
        push(&mut args, "--allowedTools", allowed.join(","));
    }
    if !request.disallowed_tools.is_empty() {
        push(
            &mut args,
            "--disallowedTools",
            request.disallowed_tools.join(","),
        );
    }
    match request.permission_mode {
        None => {}
        Some(PermissionMode::Default) => push(&mut args, "--permission-mode", "default".to_owned()),
        Some(PermissionMode::AcceptEdits) => {
            push(&mut args, "--permission-mode", "acceptEdits".to_owned())
        }
        Some(PermissionMode::Plan) => push(&mut args, "--permission-mode", "plan".to_owned()),
        Some(PermissionMode::Bypass) => args.push("--dangerously-skip-permissions".to_owned()),
        // The CLI's default mode asks; the stdio prompt hands each question to forge over
        // the control protocol, which needs stream-json input (the session writes the
        // prompt as its first message).
        Some(PermissionMode::Ask) => {
            push(&mut args, "--permission-mode", "default".to_owned());
            push(&mut args, "--permission-prompt-tool", "stdio".to_owned());
            push(&mut args, "--input-format", "stream-json".to_owned());
        }
    }
    if let Some(session) = &request.resume_session_id {
        // The equals form: a session id starting with `-` must not read as a flag.
        args.push(format!("--resume={session}"));
    }
    if let Some(prompt) = &request.append_system_prompt {
        push(&mut args, "--append-system-prompt", prompt.clone());
    }
    if let Some(mcp) = &request.mcp_config {
        push(&mut args, "--mcp-config", mcp.clone());
    }
    let forge_tools_file = forge_tools.map(|(mcp_args, file)| {
        args.extend(mcp_args);
        file
    });
    for dir in &request.add_dirs {
        push(&mut args, "--add-dir", dir.to_string_lossy().into_owned());
    }
    args.extend(settings.args.iter().cloned());
    args.extend(request.extra_args.iter().cloned());

    let program = settings
        .binary
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_BINARY));
    let mut invocation = Invocation::new(program, args, request.workdir.clone());
    invocation.env = environment(settings, request, ctx);
    if request.permission_mode == Some(PermissionMode::Ask) {
        invocation.stdin_open = true;
    } else {
        invocation.stdin = Some(request.prompt.clone().into_bytes());
    }
    invocation.install_hint = Some(hints::INSTALL.to_owned());
    if let Some(run_home) = &ctx.home {
        invocation.files = home::prepared_files(run_home, user, settings.copy_user_auth);
    }
    invocation.files.extend(forge_tools_file);
    Ok(invocation)
}

fn push(args: &mut Vec<String>, flag: &str, value: String) {
    args.push(flag.to_owned());
    args.push(value);
}

/// Defaults, then what the run needs (home, root bypass), then `settings.env`, then
/// `request.env`: the caller's explicit values always win.
fn environment(
    settings: &ProviderSettings,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> EnvSpec {
    let mut env = EnvSpec {
        inherit: true,
        remove: REMOVED_ENV.map(str::to_owned).to_vec(),
        ..EnvSpec::default()
    };
    for (key, value) in DEFAULT_ENV {
        env.set.insert(key.to_owned(), value.to_owned());
    }
    if request.permission_mode == Some(PermissionMode::Bypass) {
        // claude refuses --dangerously-skip-permissions as root (CI containers run as root)
        // unless it is told it runs in a sandbox. Bypass already means "the caller vouches
        // for the sandbox around the run", so forge says so for it.
        env.set.insert("IS_SANDBOX".to_owned(), "1".to_owned());
    }
    if let Some(run_home) = &ctx.home {
        env.set.extend(home::env_vars(run_home));
    }
    env.set
        .extend(settings.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.set
        .extend(request.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}
