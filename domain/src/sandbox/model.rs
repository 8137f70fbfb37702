//! How a confined run reaches its model through forge's egress (issue 31): which variable
//! points each shipped CLI at its model, where its API key travels, and the route that
//! follows from the base URL the run really uses.
//!
//! The agent's loopback is its own: a model on `http://127.0.0.1:PORT` (forge's fake model,
//! a local gateway) is reached at the same address inside, relayed to the same address
//! outside. Any other base URL (`https://api.anthropic.com`) is rewritten to a loopback
//! address inside whose route forwards to it: the CLI then speaks plain HTTP to forge's
//! egress, which is how the real key can be added outside, on that route only.

use serde::{Deserialize, Serialize};

use super::net::Endpoint;

/// Where a request carries its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySlot {
    /// A header (`x-api-key`, `authorization` with its `Bearer ` prefix): the placeholder is
    /// replaced wherever it occurs in the value.
    Header(String),
    /// A query parameter (`key`): replaced when its value is the placeholder.
    Query(String),
}

/// An environment variable holding a key, and where the CLI sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyUse {
    pub env: String,
    pub slots: Vec<KeySlot>,
}

/// How a CLI is pointed at its model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelWiring {
    /// The variables that set the base URL, first found wins (empty: codex, whose base URL
    /// is in its `config.toml`).
    pub base_url_env: Vec<String>,
    /// The base URL when none is set.
    pub default_base_url: String,
    /// The keys the CLI may authenticate with.
    pub keys: Vec<KeyUse>,
    /// The base URL and the key's variable come from `$CODEX_HOME/config.toml`'s model
    /// provider (`base_url`, `env_key`) when it names one.
    pub codex_config: bool,
}

fn header(name: &str) -> KeySlot {
    KeySlot::Header(name.to_owned())
}

fn key(env: &str, slots: Vec<KeySlot>) -> KeyUse {
    KeyUse {
        env: env.to_owned(),
        slots,
    }
}

/// The wiring of a shipped CLI, by the provider's name or the program's (an ACP agent:
/// `claude-agent-acp`, `codex-acp`, `gemini --acp`). `None` for a CLI forge does not know:
/// it reaches no model route, only `[sandbox] allow_hosts`.
pub fn model_wiring(name: &str) -> Option<ModelWiring> {
    if name.contains("claude") {
        Some(ModelWiring {
            base_url_env: vec!["ANTHROPIC_BASE_URL".to_owned()],
            default_base_url: "https://api.anthropic.com".to_owned(),
            keys: vec![
                key("ANTHROPIC_API_KEY", vec![header("x-api-key")]),
                key("ANTHROPIC_AUTH_TOKEN", vec![header("authorization")]),
                key("CLAUDE_CODE_OAUTH_TOKEN", vec![header("authorization")]),
            ],
            codex_config: false,
        })
    } else if name.contains("codex") {
        Some(ModelWiring {
            base_url_env: Vec::new(),
            default_base_url: "https://api.openai.com/v1".to_owned(),
            keys: vec![
                key("OPENAI_API_KEY", vec![header("authorization")]),
                key("CODEX_API_KEY", vec![header("authorization")]),
            ],
            codex_config: true,
        })
    } else if name.contains("gemini") {
        let slots = || vec![header("x-goog-api-key"), KeySlot::Query("key".to_owned())];
        Some(ModelWiring {
            base_url_env: vec!["GOOGLE_GEMINI_BASE_URL".to_owned()],
            default_base_url: "https://generativelanguage.googleapis.com".to_owned(),
            keys: vec![
                key("GEMINI_API_KEY", slots()),
                key("GOOGLE_API_KEY", slots()),
            ],
            codex_config: false,
        })
    } else {
        None
    }
}

/// The network of one run: its model and forge's MCP server for it. The run's own
/// `[sandbox] allow_hosts` are added by the sandbox (they are the user's, not the run's).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunNetwork {
    pub model: Option<ModelWiring>,
    /// forge's MCP server of the run (`127.0.0.1:PORT`), relayed as it is.
    pub mcp: Option<Endpoint>,
}

/// Where the model is reached from inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRoute {
    /// The loopback address inside (and outside, when `upstream` is `None`).
    pub inside: Endpoint,
    /// The origin requests go to outside (`https://api.anthropic.com`); `None`: the same
    /// address outside.
    pub upstream: Option<String>,
    /// The base URL the CLI must be given instead of its own (`http://127.0.0.1:PORT/v1`);
    /// `None` when it is used as it is.
    pub rewritten: Option<String>,
}

/// The parts of a base URL: scheme, host (IPv6 without brackets), port, path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    pub scheme: String,
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl BaseUrl {
    /// Parses `http(s)://host[:port][/path]`.
    ///
    /// # Errors
    /// Why the text is not such a URL.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("the model's base URL {text:?} {why}");
        let (scheme, rest) = text
            .trim()
            .split_once("://")
            .ok_or_else(|| bad("has no scheme"))?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad("is not http or https")),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("carries credentials"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("has a bad IPv6 host"))?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        let port = match port {
            Some(p) => p.parse::<u16>().map_err(|_| bad("has a bad port"))?,
            None => default_port,
        };
        if host.is_empty() {
            return Err(bad("has no host"));
        }
        Ok(Self {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
            path: path.trim_end_matches('/').to_owned(),
        })
    }

    /// Plain HTTP to this machine: the CLI reaches it at the same address inside.
    fn is_loopback_http(&self) -> bool {
        self.scheme == "http"
            && (self.host == "localhost"
                || self.host == "::1"
                || self
                    .host
                    .strip_prefix("127.")
                    .is_some_and(|rest| rest.split('.').count() == 3))
    }
}

/// The first loopback port tried for a model whose base URL is rewritten.
pub const REWRITTEN_MODEL_PORT: u16 = 47_000;

/// The route to the model at `base_url`; a rewritten base URL takes the first port from
/// [`REWRITTEN_MODEL_PORT`] that is not in `taken` (forge's MCP server, the proxy).
///
/// # Errors
/// The base URL is not an http(s) URL.
pub fn model_route(base_url: &str, taken: &[u16]) -> Result<ModelRoute, String> {
    let url = BaseUrl::parse(base_url)?;
    if url.is_loopback_http() {
        let host = if url.host == "localhost" {
            "127.0.0.1".to_owned()
        } else {
            url.host
        };
        return Ok(ModelRoute {
            inside: Endpoint {
                host,
                port: url.port,
            },
            upstream: None,
            rewritten: None,
        });
    }
    let mut port = REWRITTEN_MODEL_PORT;
    while taken.contains(&port) {
        port += 1;
    }
    let host = if url.host.contains(':') {
        format!("[{}]", url.host)
    } else {
        url.host.clone()
    };
    let default = if url.scheme == "https" { 443 } else { 80 };
    let origin = if url.port == default {
        format!("{}://{host}", url.scheme)
    } else {
        format!("{}://{host}:{}", url.scheme, url.port)
    };
    Ok(ModelRoute {
        inside: Endpoint {
            host: "127.0.0.1".to_owned(),
            port,
        },
        upstream: Some(origin),
        rewritten: Some(format!("http://127.0.0.1:{port}{}", url.path)),
    })
}

/// An MCP server's `http://127.0.0.1:PORT/mcp` as the endpoint the run reaches.
pub fn mcp_endpoint(url: &str) -> Option<Endpoint> {
    let url = BaseUrl::parse(url).ok()?;
    url.is_loopback_http().then(|| Endpoint {
        host: if url.host == "localhost" {
            "127.0.0.1".to_owned()
        } else {
            url.host
        },
        port: url.port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(host: &str, port: u16) -> Endpoint {
        Endpoint {
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn routes_follow_the_base_url() {
        let check = |url: &str, taken: &[u16], want: Result<ModelRoute, ()>| {
            assert_eq!(model_route(url, taken).map_err(|_| ()), want, "{url}");
        };
        let same = |host: &str, port| ModelRoute {
            inside: ep(host, port),
            upstream: None,
            rewritten: None,
        };
        let via = |port, upstream: &str, rewritten: &str| ModelRoute {
            inside: ep("127.0.0.1", port),
            upstream: Some(upstream.to_owned()),
            rewritten: Some(rewritten.to_owned()),
        };
        check("http://127.0.0.1:4100", &[], Ok(same("127.0.0.1", 4100)));
        check("http://127.0.0.1:4100/v1", &[], Ok(same("127.0.0.1", 4100)));
        check("http://localhost:8080/", &[], Ok(same("127.0.0.1", 8080)));
        check("http://127.0.0.2", &[], Ok(same("127.0.0.2", 80)));
        check("http://[::1]:9", &[], Ok(same("::1", 9)));
        check(
            "https://api.anthropic.com",
            &[],
            Ok(via(
                47_000,
                "https://api.anthropic.com",
                "http://127.0.0.1:47000",
            )),
        );
        check(
            "https://api.openai.com/v1/",
            &[47_000, 47_001],
            Ok(via(
                47_002,
                "https://api.openai.com",
                "http://127.0.0.1:47002/v1",
            )),
        );
        check(
            "https://gw.example.com:8443/anthropic",
            &[],
            Ok(via(
                47_000,
                "https://gw.example.com:8443",
                "http://127.0.0.1:47000/anthropic",
            )),
        );
        // Look-alikes of loopback: reached through a rewritten route, never as loopback.
        check(
            "https://127.0.0.1:4100",
            &[],
            Ok(via(
                47_000,
                "https://127.0.0.1:4100",
                "http://127.0.0.1:47000",
            )),
        );
        check(
            "http://127.evil.com",
            &[],
            Ok(via(47_000, "http://127.evil.com", "http://127.0.0.1:47000")),
        );
        check(
            "http://localhost.evil.com:80",
            &[],
            Ok(via(
                47_000,
                "http://localhost.evil.com",
                "http://127.0.0.1:47000",
            )),
        );
        check("ftp://127.0.0.1", &[], Err(()));
        check("127.0.0.1:4100", &[], Err(()));
        check("http://user:pw@127.0.0.1:1", &[], Err(()));
        check("http://127.0.0.1:99999", &[], Err(()));
        check("http://", &[], Err(()));
    }

    #[test]
    fn wiring_by_provider_or_program_name() {
        let vars = |name: &str| {
            model_wiring(name).map(|w| {
                (
                    w.base_url_env,
                    w.keys.into_iter().map(|k| k.env).collect::<Vec<_>>(),
                )
            })
        };
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            vars("claude-agent-acp"),
            Some((
                strings(&["ANTHROPIC_BASE_URL"]),
                strings(&[
                    "ANTHROPIC_API_KEY",
                    "ANTHROPIC_AUTH_TOKEN",
                    "CLAUDE_CODE_OAUTH_TOKEN"
                ])
            ))
        );
        assert_eq!(
            vars("codex"),
            Some((Vec::new(), strings(&["OPENAI_API_KEY", "CODEX_API_KEY"])))
        );
        assert!(model_wiring("codex-acp").is_some_and(|w| w.codex_config));
        assert_eq!(
            vars("gemini"),
            Some((
                strings(&["GOOGLE_GEMINI_BASE_URL"]),
                strings(&["GEMINI_API_KEY", "GOOGLE_API_KEY"])
            ))
        );
        assert_eq!(vars("sh"), None);
        assert_eq!(vars("my-agent"), None);
    }

    #[test]
    fn mcp_endpoints_are_loopback_http_only() {
        assert_eq!(
            mcp_endpoint("http://127.0.0.1:5555/mcp"),
            Some(ep("127.0.0.1", 5555))
        );
        assert_eq!(mcp_endpoint("https://example.com/mcp"), None);
        assert_eq!(mcp_endpoint("not a url"), None);
    }
}
