//! Permission rules in Claude Code's syntax, applied to every agent's requests by the
//! tool's kind: `Bash(cargo test:*)` (a command and what follows it), `Bash(git status)`
//! (exactly that), `Read(./.env)`, `Edit(src/**)`, `Write(…)`, `WebFetch(domain:docs.rs)`,
//! `WebSearch`, `mcp__server` / `mcp__server__tool`, or a bare tool name.
//!
//! Deny rules come first. A rule with a command allows a command only when every simple
//! command in it matches (`cargo test; rm -rf /` is two, and the second matches nothing) and
//! the shell cannot run anything the words do not show; a deny rule matches when any part
//! does, or when the command is opaque and names it anywhere — both fail closed.
//!
//! A repository's `forge.toml` narrows the user's rules and never widens them: its deny
//! rules add to the user's, and when it lists allow rules a request must match one of
//! those as well as one of the user's to be allowed without asking.

use std::fmt;

use super::decision::{PermissionDecision, Verdict};
use super::glob::PathPattern;
use super::request::ToolRequest;
use super::shell::{self, Command};
use crate::tool::ToolKind;

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permission rule {rule:?}: {reason}")]
pub struct RuleError {
    pub rule: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RuleTool {
    Bash,
    Read,
    Edit,
    Write,
    WebFetch,
    WebSearch,
    /// `mcp__server` (every tool of it) or `mcp__server__tool`.
    Mcp(String),
    /// Any other tool, by its exact name.
    Named(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Spec {
    /// `cargo test:*`: these words, then anything.
    Prefix(Vec<String>),
    /// `git status`: exactly these words.
    Exact(Vec<String>),
    Path(PathPattern),
    /// `domain:docs.rs`, `domain:*.example.com`.
    Domain(String),
}

/// One rule, as written and as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    text: String,
    tool: RuleTool,
    spec: Option<Spec>,
}

/// Which way a rule is applied: an allow must be sure, a deny errs towards matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polarity {
    Allow,
    Deny,
}

impl Rule {
    /// Reads one rule.
    ///
    /// # Errors
    /// [`RuleError`] naming the rule and what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let err = |reason: String| RuleError {
            rule: text.to_owned(),
            reason,
        };
        let trimmed = text.trim();
        let (name, content) = match trimmed.split_once('(') {
            None => (trimmed, None),
            Some((name, rest)) => match rest.strip_suffix(')') {
                Some(content) => (name, Some(content)),
                None => return Err(err("expected Tool or Tool(specifier)".to_owned())),
            },
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(err(format!("{name:?} is not a tool name")));
        }
        let content = content.map(str::trim).filter(|c| *c != "*");
        let tool = match name {
            "Bash" => RuleTool::Bash,
            "Read" => RuleTool::Read,
            "Edit" | "MultiEdit" | "NotebookEdit" => RuleTool::Edit,
            "Write" => RuleTool::Write,
            "WebFetch" => RuleTool::WebFetch,
            "WebSearch" => RuleTool::WebSearch,
            mcp if mcp.starts_with("mcp__") => RuleTool::Mcp(mcp.to_owned()),
            other => RuleTool::Named(other.to_owned()),
        };
        let spec = match (content, &tool) {
            (None, _) => None,
            (Some(""), _) => return Err(err("empty specifier".to_owned())),
            (Some(c), RuleTool::Bash) => Some(command_spec(c).map_err(err)?),
            (Some(c), RuleTool::Read | RuleTool::Edit | RuleTool::Write) => {
                Some(Spec::Path(PathPattern::parse(c).map_err(err)?))
            }
            (Some(c), RuleTool::WebFetch) => match c.strip_prefix("domain:") {
                Some(host) if !host.is_empty() => Some(Spec::Domain(host.to_ascii_lowercase())),
                _ => return Err(err("WebFetch takes domain:HOST".to_owned())),
            },
            (Some(_), _) => {
                return Err(err(format!(
                    "{name} takes no specifier (Bash, Read, Edit, Write and WebFetch do)"
                )));
            }
        };
        Ok(Self {
            text: trimmed.to_owned(),
            tool,
            spec,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the rule speaks of this tool at all.
    fn applies_to(&self, request: &ToolRequest) -> bool {
        match &self.tool {
            RuleTool::Bash => request.kind == ToolKind::Shell,
            RuleTool::Read => matches!(request.kind, ToolKind::FileRead | ToolKind::Search),
            RuleTool::Edit | RuleTool::Write => request.kind == ToolKind::FileWrite,
            RuleTool::WebFetch => request.kind == ToolKind::Web && request.url.is_some(),
            RuleTool::WebSearch => request.kind == ToolKind::Web && request.url.is_none(),
            RuleTool::Mcp(name) => {
                let name = name.strip_suffix("__*").unwrap_or(name);
                request.tool == name
                    || request
                        .tool
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with("__"))
            }
            RuleTool::Named(name) => request.tool == *name,
        }
    }

    fn matches(&self, request: &ToolRequest, workspace: &str, polarity: Polarity) -> bool {
        if !self.applies_to(request) {
            return false;
        }
        // What a specifier needs and the request lacks: an allow is not sure, a deny is.
        let missing = polarity == Polarity::Deny;
        match &self.spec {
            None => true,
            Some(Spec::Prefix(words) | Spec::Exact(words)) => {
                let exact = matches!(self.spec, Some(Spec::Exact(_)));
                request.command.as_deref().map_or(missing, |command| {
                    command_matches(words, exact, command, polarity)
                })
            }
            Some(Spec::Path(pattern)) => request
                .path
                .as_deref()
                .map_or(missing, |path| pattern.matches(path, workspace)),
            Some(Spec::Domain(domain)) => request
                .url
                .as_deref()
                .and_then(host_of)
                .map_or(missing, |host| domain_matches(domain, &host)),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn command_spec(content: &str) -> Result<Spec, String> {
    let (head, prefix) = match content.strip_suffix(":*") {
        Some(head) => (head, true),
        None => (content, false),
    };
    if head.contains('*') {
        return Err("a command takes only a trailing :* (cargo test:*)".to_owned());
    }
    match shell::split(head) {
        Command::Simple(mut commands) if commands.len() == 1 => {
            let words = commands.remove(0);
            Ok(if prefix {
                Spec::Prefix(words)
            } else {
                Spec::Exact(words)
            })
        }
        _ => Err(
            "the command must be one simple command (no ;, &&, |, redirections or \
             substitutions)"
                .to_owned(),
        ),
    }
}

fn command_matches(words: &[String], exact: bool, command: &str, polarity: Polarity) -> bool {
    let fits =
        |simple: &Vec<String>| simple.starts_with(words) && (!exact || simple.len() == words.len());
    match (shell::split(command), polarity) {
        (Command::Simple(commands), Polarity::Allow) => {
            !commands.is_empty() && commands.iter().all(fits)
        }
        (Command::Simple(commands), Polarity::Deny) => commands.iter().any(fits),
        (Command::Opaque, Polarity::Allow) => false,
        // Opaque: the rule's words anywhere in it, as whole words.
        (Command::Opaque, Polarity::Deny) => flatten(command).contains(&flatten(&words.join(" "))),
    }
}

/// The words of a text, ` `-separated and framed by spaces, punctuation read as a space.
fn flatten(text: &str) -> String {
    let plain: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_./=:+,@%".contains(c) {
                c
            } else {
                ' '
            }
        })
        .collect();
    format!(
        " {} ",
        plain.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// The host of a URL, lower-cased, without user info or port.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn domain_matches(domain: &str, host: &str) -> bool {
    match domain.strip_prefix("*.") {
        Some(parent) => host.strip_suffix(parent).is_some_and(|h| h.ends_with('.')),
        None => host == domain,
    }
}

/// What the rules say about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    Allow {
        rule: String,
    },
    Deny {
        rule: String,
    },
    /// No rule decides: a person is asked.
    Ask,
}

impl RuleVerdict {
    /// The decision to store, when a rule decided.
    pub fn decision(&self) -> Option<PermissionDecision> {
        match self {
            Self::Allow { rule } => Some(PermissionDecision::rule(Verdict::Allow, rule)),
            Self::Deny { rule } => Some(PermissionDecision::rule(Verdict::Deny, rule)),
            Self::Ask => None,
        }
    }
}

/// One configuration's `allow` and `deny` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
}

impl RuleSet {
    /// Reads both lists.
    ///
    /// # Errors
    /// [`RuleError`] for the first rule that cannot be read.
    pub fn parse(allow: &[String], deny: &[String]) -> Result<Self, RuleError> {
        let read = |texts: &[String]| -> Result<Vec<Rule>, RuleError> {
            texts.iter().map(|t| Rule::parse(t)).collect()
        };
        Ok(Self {
            allow: read(allow)?,
            deny: read(deny)?,
        })
    }

    fn denying(&self, request: &ToolRequest, workspace: &str) -> Option<&Rule> {
        self.deny
            .iter()
            .find(|r| r.matches(request, workspace, Polarity::Deny))
    }

    fn allowing(&self, request: &ToolRequest, workspace: &str) -> Option<&Rule> {
        self.allow
            .iter()
            .find(|r| r.matches(request, workspace, Polarity::Allow))
    }
}

/// The user's rules, narrowed by a repository's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub user: RuleSet,
    pub repository: Option<RuleSet>,
}

impl Rules {
    /// What the rules say about `request` in `workspace` (an absolute directory).
    pub fn verdict(&self, request: &ToolRequest, workspace: &str) -> RuleVerdict {
        let sets = std::iter::once(&self.user).chain(self.repository.as_ref());
        for set in sets {
            if let Some(rule) = set.denying(request, workspace) {
                return RuleVerdict::Deny {
                    rule: rule.to_string(),
                };
            }
        }
        let Some(rule) = self.user.allowing(request, workspace) else {
            return RuleVerdict::Ask;
        };
        let narrowed = self
            .repository
            .as_ref()
            .filter(|repo| !repo.allow.is_empty())
            .is_some_and(|repo| repo.allowing(request, workspace).is_none());
        if narrowed {
            return RuleVerdict::Ask;
        }
        RuleVerdict::Allow {
            rule: rule.to_string(),
        }
    }
}
