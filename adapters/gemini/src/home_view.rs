//! A run in the user's own home (no private home): what forge must tell gemini (its tool
//! server, max turns, excluded tools — gemini takes these only from settings files) goes into
//! a run-private *view* of the user's gemini home, and the user's files stay as they are.
//!
//! `GEMINI_CLI_HOME=<run dir>/gemini-home` (gemini's home for everything it keeps, `HOME`
//! stays the user's). Its `.gemini/` holds a symlink to every entry of the user's
//! `~/.gemini/` (login, accounts, installation id, trusted folders, extensions, session
//! history in `tmp/`, …) except `settings.json`, which is a copy of the user's merged with
//! forge's overlay ([`crate::home::merge`]: `mcpServers` key by key, `tools.exclude` as a
//! union, `model.maxSessionTurns` set). The user's `~/.agents` (gemini looks for skills
//! beside its `.gemini`) is linked too. So the user's auth and their own MCP servers keep
//! working beside forge's, in any directory and for any user — unlike a system settings file
//! (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`), which gemini 0.61 reads only when it and every
//! directory above it are root-owned and not group/world-writable.
//!
//! What gemini writes during a run (verified with 0.61, see docs/providers.md): into linked
//! directories (`tmp/<project>/chats`, `history/`) it writes through the link — the sessions
//! are the user's, so `--resume` and the user's own `gemini --resume` find them, as when
//! gemini runs in the home itself; a file it replaces by renaming (`projects.json`) or creates
//! (the first `tmp/` of a user who has none) lands in the view; a refreshed login
//! (`oauth_creds.json`, rewritten in place) updates the user's file, as gemini itself would.
//! `settings.json` is never the user's. The view lives in the run's artifact bundle and goes
//! with it; removing the bundle removes the links, never their targets.
//!
//! Gemini merges a trusted workspace's `.gemini/settings.json` over the user's (forge trusts
//! the workspace): where it sets what forge must set, the run is refused
//! ([`workspace_overrides`]) rather than run without forge's limit or tools.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_ports::{FileSource, PreparedFile};
use serde_json::Value;

use crate::home::merge;

/// The variable naming gemini's home (the directory holding `.gemini/`).
pub const HOME_ENV: &str = "GEMINI_CLI_HOME";
/// The view's directory in the run's artifact bundle.
pub const VIEW_DIR: &str = "gemini-home";
/// The one entry of the user's `.gemini/` that the view replaces.
const SETTINGS: &str = "settings.json";
/// Beside `.gemini/` in gemini's home: the user's agent skills.
const AGENTS_DIR: &str = ".agents";

/// The run's view of the user's gemini home.
#[derive(Debug)]
pub struct View {
    /// Its `settings.json` and links, written before gemini starts.
    pub files: Vec<PreparedFile>,
    /// `GEMINI_CLI_HOME` and the view's path.
    pub env: (String, String),
}

/// The view's files and the environment pointing gemini at it. `lookup` reads the run's
/// environment (request, settings, then forge's own): the user's gemini home is
/// `$GEMINI_CLI_HOME`, else `$HOME`, else `user_home`.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when there is no user home to mirror, or the user's
/// `settings.json` cannot be read or is not plain JSON; [`ForgeError::Io`] when the user's
/// `.gemini/` cannot be listed.
pub fn files_and_env(
    run_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    user_home: Option<&Path>,
    overlay: Value,
) -> Result<View, ForgeError> {
    let user = user_gemini_home(lookup, user_home).ok_or_else(|| ForgeError::InvalidRequest {
        reason: "gemini takes tools, max turns and excluded tools only from settings files, \
                 and forge finds no home to build the run's settings from (HOME unset): run \
                 gemini with a private home (isolate_home or a configured home)"
            .to_owned(),
    })?;
    let view = run_dir.join(VIEW_DIR);
    let user_dir = user.join(".gemini");
    let view_dir = view.join(".gemini");

    let mut settings = read_settings(&user_dir.join(SETTINGS))?;
    let servers: Vec<Value> = overlay["mcpServers"]
        .as_object()
        .map(|servers| servers.keys().cloned().map(Value::String).collect())
        .unwrap_or_default();
    merge(&mut settings, overlay);
    admit(&mut settings, &servers);
    let mut bytes = serde_json::to_vec_pretty(&settings).unwrap_or_default();
    bytes.push(b'\n');
    let mut files = vec![PreparedFile {
        path: view_dir.join(SETTINGS),
        source: FileSource::Contents(bytes),
    }];
    for name in entries(&user_dir)? {
        if name != SETTINGS {
            files.push(link(&view_dir, &user_dir, &name));
        }
    }
    if std::fs::symlink_metadata(user.join(AGENTS_DIR)).is_ok() {
        files.push(link(&view, &user, OsStr::new(AGENTS_DIR)));
    }
    let env = (HOME_ENV.to_owned(), view.to_string_lossy().into_owned());
    Ok(View { files, env })
}

/// Lets forge's servers through the user's own MCP filters: a non-empty `mcp.allowed` gets
/// their names (gemini would drop any server not listed), and `mcp.excluded` loses them (the
/// name now means forge's server, whose entry replaced any of the user's by that name).
fn admit(settings: &mut Value, servers: &[Value]) {
    if let Some(allowed) = settings
        .pointer_mut("/mcp/allowed")
        .and_then(Value::as_array_mut)
        .filter(|allowed| !allowed.is_empty())
    {
        for name in servers {
            if !allowed.contains(name) {
                allowed.push(name.clone());
            }
        }
    }
    if let Some(excluded) = settings
        .pointer_mut("/mcp/excluded")
        .and_then(Value::as_array_mut)
    {
        excluded.retain(|name| !servers.contains(name));
    }
}

/// Refuses a run whose workspace settings (which gemini merges over the user's, and over a
/// private home's) would replace what forge sets: `model.maxSessionTurns`, or forge's entry in
/// `mcpServers`. Unreadable workspace settings are left to gemini, which names them.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] naming the file and the key.
pub fn workspace_overrides(workdir: &Path, overlay: &Value) -> Result<(), ForgeError> {
    let path = workdir.join(".gemini").join(SETTINGS);
    let Some(workspace) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    else {
        return Ok(());
    };
    let keys = ["/model/maxSessionTurns"]
        .into_iter()
        .map(str::to_owned)
        .chain(
            overlay["mcpServers"]
                .as_object()
                .into_iter()
                .flat_map(|servers| servers.keys().map(|name| format!("/mcpServers/{name}"))),
        );
    for key in keys {
        if overlay.pointer(&key).is_some() && workspace.pointer(&key).is_some() {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "{} sets {}, which gemini merges over the settings forge gives the run \
                     (max turns, its tool server): remove it from the workspace's settings or \
                     run without forge's setting",
                    path.display(),
                    key.trim_start_matches('/').replace('/', ".")
                ),
            });
        }
    }
    Ok(())
}

/// The user's gemini home: `$GEMINI_CLI_HOME`, else `$HOME`, else `user_home`.
fn user_gemini_home(
    lookup: &dyn Fn(&str) -> Option<String>,
    user_home: Option<&Path>,
) -> Option<PathBuf> {
    [HOME_ENV, "HOME"]
        .into_iter()
        .find_map(|key| lookup(key).filter(|v| !v.is_empty()).map(PathBuf::from))
        .or_else(|| user_home.map(Path::to_path_buf))
}

/// The names in `dir`, sorted; none when it does not exist.
fn entries(dir: &Path) -> Result<Vec<OsString>, ForgeError> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ForgeError::io(format!("listing {}", dir.display()), e)),
    };
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| ForgeError::io(format!("listing {}", dir.display()), e))?;
        names.push(entry.file_name());
    }
    names.sort();
    Ok(names)
}

fn link(view: &Path, user: &Path, name: &OsStr) -> PreparedFile {
    PreparedFile {
        path: view.join(name),
        source: FileSource::SymlinkTo(user.join(name)),
    }
}

/// The user's settings; an empty object when they have none.
fn read_settings(path: &Path) -> Result<Value, ForgeError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        Err(e) => {
            return Err(ForgeError::InvalidRequest {
                reason: format!("cannot read gemini's settings {}: {e}", path.display()),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| ForgeError::InvalidRequest {
        reason: format!(
            "cannot merge run settings into a copy of gemini's settings {}: not plain JSON \
             ({e})",
            path.display()
        ),
    })
}
