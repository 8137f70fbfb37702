//! Request → `gemini` invocation.
//!
//! `gemini -p "" --output-format stream-json …` with the prompt on stdin. Verified with
//! 0.61.0: `-p` text is *appended* to piped stdin (`<stdin>\n\n<-p>`), and an empty `-p`
//! still selects headless mode, so the model sees exactly the stdin bytes. (stdin is read
//! in full up to 8 MiB; gemini silently truncates beyond that, so longer prompts are refused.)

use std::path::Path;

use forge_domain::{ExecutionRequest, ForgeError, PermissionMode};
use forge_ports::{EnvSpec, Invocation, InvocationContext, ProviderSettings};

use crate::home;

/// The binary name when none is configured.
pub const DEFAULT_BINARY: &str = "gemini";
pub const INSTALL_HINT: &str = "npm i -g @google/gemini-cli";
/// gemini reads at most this much of stdin.
pub const MAX_STDIN_BYTES: usize = 8 * 1024 * 1024;

/// `--approval-mode` value for a forge permission mode (0.61 has all four).
pub fn approval_mode(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "auto_edit",
        PermissionMode::Bypass => "yolo",
        PermissionMode::Plan => "plan",
        // Refused before (`check_supported`): gemini -p cannot hand a request over.
        PermissionMode::Ask => "default",
    }
}

fn invalid(reason: impl Into<String>) -> ForgeError {
    ForgeError::InvalidRequest {
        reason: reason.into(),
    }
}

/// Refuses what gemini cannot do, where dropping it silently would change the run.
fn check_supported(request: &ExecutionRequest) -> Result<(), ForgeError> {
    if request.permission_mode == Some(PermissionMode::Ask) {
        return Err(invalid(
            forge_domain::permission::ask_refusal("gemini").unwrap_or_default(),
        ));
    }
    if request.prompt.trim().is_empty() {
        return Err(invalid("gemini needs a non-empty prompt"));
    }
    if request.prompt.len() > MAX_STDIN_BYTES {
        return Err(invalid(format!(
            "the prompt is {} bytes; gemini reads at most {MAX_STDIN_BYTES} bytes of stdin",
            request.prompt.len()
        )));
    }
    if request.append_system_prompt.is_some() {
        return Err(invalid(
            "gemini cannot append to its system prompt (GEMINI_SYSTEM_MD replaces it)",
        ));
    }
    if request.output_schema.is_some() {
        return Err(invalid("gemini has no structured-output (schema) option"));
    }
    if request.mcp_config.is_some() {
        return Err(invalid(
            "gemini takes MCP servers from settings.json (mcpServers), not a config argument",
        ));
    }
    if let Some(tool) = request.allowed_tools.iter().find(|t| t.contains(',')) {
        return Err(invalid(format!(
            "tool name {tool:?} contains a comma, which gemini's --allowed-tools splits on"
        )));
    }
    Ok(())
}

fn comma_joined_dirs(dirs: &[std::path::PathBuf]) -> Result<String, ForgeError> {
    let mut joined = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let dir = dir.to_string_lossy();
        if dir.contains(',') {
            return Err(invalid(format!(
                "directory {dir:?} contains a comma, which gemini's --include-directories splits on"
            )));
        }
        joined.push(dir.into_owned());
    }
    Ok(joined.join(","))
}

/// Builds the invocation. `user_home` is the user's own home (for `copy_user_auth`, and the
/// home a run without a private one mirrors when `HOME` is not in the run's environment).
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for what gemini cannot do (see `check_supported`), when the
/// workspace's settings would override max turns or forge's tool server
/// ([`crate::home_view::workspace_overrides`]), and when the settings the run's home is made
/// from cannot be read ([`crate::home`], [`crate::home_view`]).
pub fn build(
    settings: &ProviderSettings,
    user_home: Option<&Path>,
    request: &ExecutionRequest,
    ctx: &InvocationContext,
) -> Result<Invocation, ForgeError> {
    check_supported(request)?;
    let mut overlay = home::overlay(request)?;
    let forge_tools = crate::mcp::args_and_overlay(ctx);
    if let Some((_, servers)) = &forge_tools {
        match &mut overlay {
            Some(overlay) => home::merge(overlay, servers.clone()),
            None => overlay = Some(servers.clone()),
        }
    }

    let mut args: Vec<String> = vec![
        "--output-format".into(),
        "stream-json".into(),
        "-p".into(),
        String::new(),
    ];
    if let Some(model) = request.model.as_ref().or(settings.model.as_ref()) {
        args.extend(["-m".into(), model.clone()]);
    }
    if let Some(mode) = request.permission_mode {
        args.extend(["--approval-mode".into(), approval_mode(mode).into()]);
    }
    if !request.allowed_tools.is_empty() {
        args.extend(["--allowed-tools".into(), request.allowed_tools.join(",")]);
    }
    if !request.add_dirs.is_empty() {
        args.extend([
            "--include-directories".into(),
            comma_joined_dirs(&request.add_dirs)?,
        ]);
    }
    if let Some(session) = &request.resume_session_id {
        args.extend(["--resume".into(), session.as_str().to_owned()]);
    }
    // In a private home only forge's server is allowed; in the user's own, their servers
    // keep working beside forge's (which its settings entry trusts).
    if let (Some((mcp_args, _)), Some(_)) = (forge_tools, &ctx.home) {
        args.extend(mcp_args);
    }
    args.extend(settings.args.iter().cloned());
    args.extend(request.extra_args.iter().cloned());

    let mut env = EnvSpec::default();
    // Headless runs in an untrusted folder exit 55 (since 0.41); the env var (unlike
    // `--skip-trust`) is harmless on versions that do not know it.
    env.set
        .insert("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into());
    env.set
        .extend(settings.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.set
        .extend(request.env.iter().map(|(k, v)| (k.clone(), v.clone())));

    if let Some(overlay) = &overlay {
        crate::home_view::workspace_overrides(&request.workdir, overlay)?;
    }
    let mut files = Vec::new();
    match &ctx.home {
        Some(home) => {
            let home_str = home.to_string_lossy().into_owned();
            env.set.insert("HOME".into(), home_str.clone());
            env.set.insert("GEMINI_CLI_HOME".into(), home_str);
            files = home::home_files(home, settings.copy_user_auth, user_home, overlay)?;
        }
        None => {
            if let Some(overlay) = overlay {
                let lookup = |key: &str| {
                    request
                        .env
                        .get(key)
                        .or_else(|| settings.env.get(key))
                        .cloned()
                        .or_else(|| std::env::var(key).ok())
                };
                let view =
                    crate::home_view::files_and_env(&ctx.run_dir, &lookup, user_home, overlay)?;
                files = view.files;
                env.set.insert(view.env.0, view.env.1);
            }
        }
    }

    let program = settings
        .binary
        .clone()
        .unwrap_or_else(|| DEFAULT_BINARY.into());
    let mut invocation = Invocation::new(program, args, &request.workdir);
    invocation.env = env;
    invocation.stdin = Some(request.prompt.as_bytes().to_vec());
    invocation.files = files;
    invocation.install_hint = Some(INSTALL_HINT.to_owned());
    Ok(invocation)
}
