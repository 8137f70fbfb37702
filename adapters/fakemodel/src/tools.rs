//! Mapping abstract scenario actions onto the concrete tools a CLI advertised.
//!
//! Every CLI sends its tool list with each request. Rather than hard-coding one version's
//! names, the server reads that list and picks the tool that exists, with its argument names
//! taken from the advertised schema; when the preferred tool is missing it falls back to the
//! shell tool (a heredoc write, `cat` for a read).

use serde_json::{Value, json};

use crate::scenario::ToolAction;

/// Which wire format a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vendor {
    Anthropic,
    OpenAi,
    Gemini,
}

/// One tool from the request's tool list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdvertisedTool {
    pub name: String,
    /// OpenAI `custom` (free-form input) tool rather than a JSON function.
    pub custom: bool,
    /// Top-level property names of its argument schema.
    pub params: Vec<String>,
}

/// The tools a request advertised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCatalog {
    pub tools: Vec<AdvertisedTool>,
}

/// What the model calls: a tool name plus its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcreteCall {
    pub name: String,
    pub payload: CallPayload,
}

/// Arguments of a call: a JSON object, or free text for an OpenAI custom tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallPayload {
    Json(Value),
    Custom(String),
    /// A Codex function inside a namespace (an MCP server's tools).
    Namespaced {
        namespace: String,
        args: Value,
    },
    /// A Codex client-side `tool_search` call with these arguments.
    ToolSearch(Value),
}

impl CallPayload {
    /// The arguments as one JSON object, for formats without namespaces or custom tools.
    pub fn as_json(&self) -> Value {
        match self {
            CallPayload::Json(args) | CallPayload::Namespaced { args, .. } => args.clone(),
            CallPayload::ToolSearch(args) => args.clone(),
            CallPayload::Custom(text) => json!({ "input": text }),
        }
    }
}

impl ToolCatalog {
    /// Read the tool list out of a request body of the given wire format.
    pub fn from_request(vendor: Vendor, body: &Value) -> Self {
        let mut tools = Vec::new();
        let list = body.get("tools").and_then(Value::as_array);
        for entry in list.into_iter().flatten() {
            match vendor {
                Vendor::Anthropic => tools.extend(tool(entry, entry.get("input_schema"), false)),
                Vendor::OpenAi => {
                    // Responses tools are flat; accept the chat-style `{function: {...}}` too.
                    let inner = entry.get("function").unwrap_or(entry);
                    let custom = entry.get("type").and_then(Value::as_str) == Some("custom");
                    tools.extend(tool(inner, inner.get("parameters"), custom));
                }
                Vendor::Gemini => {
                    let decls = entry.get("functionDeclarations").and_then(Value::as_array);
                    for decl in decls.into_iter().flatten() {
                        let schema = decl
                            .get("parametersJsonSchema")
                            .or_else(|| decl.get("parameters"));
                        tools.extend(tool(decl, schema, false));
                    }
                }
            }
        }
        ToolCatalog { tools }
    }

    fn find(&self, name: &str) -> Option<&AdvertisedTool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The first of `candidates` among `tool`'s parameters, else the first candidate.
    fn param<'a>(&self, tool: &str, candidates: &[&'a str]) -> &'a str {
        let params = self.find(tool).map(|t| t.params.as_slice()).unwrap_or(&[]);
        candidates
            .iter()
            .find(|c| params.iter().any(|p| p == *c))
            .or(candidates.first())
            .copied()
            .unwrap_or("path")
    }
}

fn tool(entry: &Value, schema: Option<&Value>, custom: bool) -> Option<AdvertisedTool> {
    let name = entry.get("name")?.as_str()?.to_owned();
    let params = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default();
    Some(AdvertisedTool {
        name,
        custom,
        params,
    })
}

/// Map one abstract action for `vendor`, given the advertised tools and the CLI's working
/// directory (used to make paths absolute where the tool wants absolute paths).
pub fn map_action(
    vendor: Vendor,
    action: &ToolAction,
    catalog: &ToolCatalog,
    workdir: Option<&str>,
) -> ConcreteCall {
    if let ToolAction::Mcp { tool, arguments } = action {
        return crate::mcp::map_mcp(vendor, tool, arguments);
    }
    match vendor {
        Vendor::Anthropic => map_anthropic(action, catalog, workdir),
        Vendor::OpenAi => map_openai(action, catalog),
        Vendor::Gemini => map_gemini(action, catalog, workdir),
    }
}

fn map_anthropic(
    action: &ToolAction,
    catalog: &ToolCatalog,
    workdir: Option<&str>,
) -> ConcreteCall {
    let bash = |command: String, description: &str| {
        json_call(
            "Bash",
            json!({ "command": command, "description": description }),
        )
    };
    match action {
        ToolAction::WriteFile { path, content } if catalog.has("Write") || !catalog.has("Bash") => {
            let file_path = absolute(path, workdir);
            json_call(
                "Write",
                json!({ "file_path": file_path, "content": content }),
            )
        }
        ToolAction::WriteFile { path, content } => {
            bash(heredoc_write(path, content), "Write a file")
        }
        ToolAction::ReadFile { path } if catalog.has("Read") || !catalog.has("Bash") => {
            json_call("Read", json!({ "file_path": absolute(path, workdir) }))
        }
        ToolAction::ReadFile { path } => bash(format!("cat {}", shell_quote(path)), "Read a file"),
        ToolAction::Shell {
            command,
            description,
            ..
        } => bash(
            command.clone(),
            description.as_deref().unwrap_or("Run a shell command"),
        ),
        ToolAction::Mcp { tool, arguments } => {
            crate::mcp::map_mcp(Vendor::Anthropic, tool, arguments)
        }
    }
}

fn map_openai(action: &ToolAction, catalog: &ToolCatalog) -> ConcreteCall {
    match action {
        ToolAction::WriteFile { path, content } => match catalog.find("apply_patch") {
            Some(tool) if tool.custom => ConcreteCall {
                name: "apply_patch".into(),
                payload: CallPayload::Custom(add_file_patch(path, content)),
            },
            Some(_) => json_call(
                "apply_patch",
                json!({ "input": add_file_patch(path, content) }),
            ),
            None => openai_shell(catalog, heredoc_write(path, content)),
        },
        ToolAction::ReadFile { path } => {
            openai_shell(catalog, format!("cat {}", shell_quote(path)))
        }
        ToolAction::Shell {
            command,
            description,
            escalate: true,
        } if catalog
            .find("exec_command")
            .is_some_and(|t| t.params.iter().any(|p| p == "sandbox_permissions")) =>
        {
            json_call(
                "exec_command",
                json!({
                    "cmd": command,
                    "sandbox_permissions": "require_escalated",
                    "justification": description.as_deref().unwrap_or("Run this command"),
                }),
            )
        }
        ToolAction::Shell { command, .. } => openai_shell(catalog, command.clone()),
        ToolAction::Mcp { tool, arguments } => crate::mcp::map_mcp(Vendor::OpenAi, tool, arguments),
    }
}

/// Codex's shell tool has changed shape across versions: `exec_command {cmd}` today,
/// `shell_command {command}` and `shell {command: [argv]}` before.
fn openai_shell(catalog: &ToolCatalog, command: String) -> ConcreteCall {
    if catalog.has("exec_command") || catalog.tools.is_empty() {
        json_call("exec_command", json!({ "cmd": command }))
    } else if catalog.has("shell_command") {
        json_call("shell_command", json!({ "command": command }))
    } else if catalog.has("shell") {
        json_call("shell", json!({ "command": ["bash", "-lc", command] }))
    } else {
        json_call("exec_command", json!({ "cmd": command }))
    }
}

fn map_gemini(action: &ToolAction, catalog: &ToolCatalog, workdir: Option<&str>) -> ConcreteCall {
    const PATH_FIELDS: &[&str] = &["file_path", "absolute_path", "path"];
    match action {
        ToolAction::WriteFile { path, content }
            if catalog.has("write_file") || !catalog.has("run_shell_command") =>
        {
            let field = catalog.param("write_file", PATH_FIELDS);
            json_call(
                "write_file",
                json!({ field: absolute(path, workdir), "content": content }),
            )
        }
        ToolAction::WriteFile { path, content } => {
            gemini_shell(catalog, heredoc_write(path, content), "Write a file")
        }
        ToolAction::ReadFile { path }
            if catalog.has("read_file") || !catalog.has("run_shell_command") =>
        {
            let field = catalog.param("read_file", PATH_FIELDS);
            json_call("read_file", json!({ field: absolute(path, workdir) }))
        }
        ToolAction::ReadFile { path } => {
            gemini_shell(catalog, format!("cat {}", shell_quote(path)), "Read a file")
        }
        ToolAction::Shell {
            command,
            description,
            ..
        } => gemini_shell(
            catalog,
            command.clone(),
            description.as_deref().unwrap_or("Run a shell command"),
        ),
        ToolAction::Mcp { tool, arguments } => crate::mcp::map_mcp(Vendor::Gemini, tool, arguments),
    }
}

fn gemini_shell(catalog: &ToolCatalog, command: String, description: &str) -> ConcreteCall {
    let offers_description = catalog
        .find("run_shell_command")
        .is_none_or(|tool| tool.params.iter().any(|p| p == "description"));
    let args = if offers_description {
        json!({ "command": command, "description": description })
    } else {
        json!({ "command": command })
    };
    json_call("run_shell_command", args)
}

fn json_call(name: &str, args: Value) -> ConcreteCall {
    ConcreteCall {
        name: name.to_owned(),
        payload: CallPayload::Json(args),
    }
}

/// `path` joined to `workdir` unless already absolute (or no workdir is known).
pub fn absolute(path: &str, workdir: Option<&str>) -> String {
    match workdir {
        Some(dir) if !path.starts_with('/') => format!("{}/{}", dir.trim_end_matches('/'), path),
        _ => path.to_owned(),
    }
}

/// A codex `apply_patch` patch that adds `path` with `content`.
pub fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in content.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch");
    patch
}

fn heredoc_write(path: &str, content: &str) -> String {
    let body = content.strip_suffix('\n').unwrap_or(content);
    format!(
        "cat > {} <<'FAKEMODEL_EOF'\n{body}\nFAKEMODEL_EOF",
        shell_quote(path)
    )
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
