//! The network half of a confined run: what its egress point is asked to let through (the
//! model's route with the keys added outside, forge's MCP server, `[sandbox] allow_hosts`),
//! worked out from the environment and files the invocation really uses.
//!
//! The egress point itself is plugged in by the composition root
//! ([`forge_ports::NetworkConfinement`], implemented by `forge-adapter-egress`): one is
//! started per confined process and lives exactly as long as it.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_domain::sandbox::{
    Confinement, EgressKey, EgressPlan, EgressRoute, Endpoint, HostPattern, KeySlot, KeyUse,
    ModelWiring, model_route,
};
use forge_ports::{FileSource, PreparedFile};

/// The plan for `confinement`, and the environment changed to match it: the model's base
/// URL pointed at its route when it had to be rewritten, each key replaced by a placeholder
/// that only the egress point turns back into the key.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for a model base URL that is not http(s).
pub fn plan(
    confinement: &Confinement,
    env: &mut BTreeMap<String, String>,
    files: &[PreparedFile],
    allow_hosts: &[HostPattern],
) -> Result<EgressPlan, ForgeError> {
    let mut out = EgressPlan {
        routes: Vec::new(),
        allow_hosts: allow_hosts.to_vec(),
        cli_args: Vec::new(),
    };
    let mut taken = Vec::new();
    if let Some(mcp) = &confinement.network.mcp {
        out.routes.push(EgressRoute {
            addr: socket_addr(mcp)?,
            upstream: None,
            keys: Vec::new(),
        });
        taken.push(mcp.port);
    }
    if let Some(wiring) = &confinement.network.model {
        model(wiring, env, files, &taken, &mut out)?;
    }
    Ok(out)
}

fn model(
    wiring: &ModelWiring,
    env: &mut BTreeMap<String, String>,
    files: &[PreparedFile],
    taken: &[u16],
    out: &mut EgressPlan,
) -> Result<(), ForgeError> {
    let mut keys = wiring.keys.clone();
    let mut base = wiring
        .base_url_env
        .iter()
        .find_map(|var| env.get(var).filter(|v| !v.is_empty()).map(|v| (var, v)))
        .map(|(var, url)| (Some(var.clone()), url.clone()));
    let codex = wiring
        .codex_config
        .then(|| codex_provider(env, files).unwrap_or_default());
    if let Some(provider) = &codex {
        if let Some(url) = provider.base_url.clone().or_else(|| {
            provider
                .is_built_in()
                .then(|| provider.openai_base_url.clone())
                .flatten()
        }) {
            base = Some((None, url));
        }
        if let Some(var) = &provider.env_key {
            keys.push(KeyUse {
                env: var.clone(),
                slots: vec![KeySlot::Header("authorization".to_owned())],
            });
        }
    }
    let (var, url) = base.unwrap_or((
        wiring.base_url_env.first().cloned(),
        wiring.default_base_url.clone(),
    ));
    let route = model_route(&url, taken).map_err(|reason| ForgeError::InvalidRequest { reason })?;
    let inside = route.rewritten.clone().unwrap_or_else(|| url.clone());
    match &codex {
        Some(provider) if provider.is_built_in() => {
            let key = keys
                .iter()
                .find(|k| env.get(&k.env).is_some_and(|v| !v.is_empty()));
            let Some(key) = key else {
                // A login in codex's home (ChatGPT): its own endpoints, through the proxy.
                if let Some(host) = forge_domain::sandbox::BaseUrl::parse(&url)
                    .ok()
                    .and_then(|u| HostPattern::parse(&format!("{}:{}", u.host, u.port)).ok())
                {
                    out.allow_hosts.push(host);
                }
                return Ok(());
            };
            out.cli_args = codex_own_provider(&inside, &key.env);
        }
        Some(provider) if route.rewritten.is_some() => {
            out.cli_args = vec![
                "-c".to_owned(),
                format!(
                    "model_providers.{}.base_url={}",
                    provider.name,
                    toml_string(&inside)
                ),
            ];
        }
        _ => {
            if let (Some(var), Some(rewritten)) = (&var, &route.rewritten) {
                env.insert(var.clone(), rewritten.clone());
            }
        }
    }
    let mut egress_keys = Vec::new();
    for key in &keys {
        let Some(value) = env.get_mut(&key.env).filter(|v| !v.is_empty()) else {
            continue;
        };
        let placeholder = format!(
            "forge-sandbox-placeholder-{}",
            uuid::Uuid::now_v7().simple()
        );
        let real = std::mem::replace(value, placeholder.clone());
        for slot in &key.slots {
            egress_keys.push(EgressKey {
                slot: slot.clone(),
                placeholder: placeholder.clone(),
                value: real.clone(),
            });
        }
    }
    out.routes.push(EgressRoute {
        addr: socket_addr(&route.inside)?,
        upstream: route.upstream,
        keys: egress_keys,
    });
    Ok(())
}

fn socket_addr(endpoint: &Endpoint) -> Result<SocketAddr, ForgeError> {
    let ip: IpAddr = endpoint
        .host
        .parse()
        .map_err(|_| ForgeError::InvalidRequest {
            reason: format!("the sandbox routes only addresses, not {:?}", endpoint.host),
        })?;
    Ok(SocketAddr::new(ip, endpoint.port))
}

/// The provider forge gives codex when it uses its built-in `openai` one with an API key:
/// the built-in provider cannot be pointed elsewhere by a `-c` override of its table, and
/// it tries a WebSocket first, which a route does not carry; this one speaks the same
/// Responses API over HTTP, authenticated with the key variable codex was given (holding
/// the placeholder inside).
const CODEX_PROVIDER: &str = "forge-sandbox";

/// codex's `-c` overrides for [`CODEX_PROVIDER`] at `base_url`, its key in `env_key`.
fn codex_own_provider(base_url: &str, env_key: &str) -> Vec<String> {
    let table = format!("model_providers.{CODEX_PROVIDER}");
    [
        format!("model_provider={}", toml_string(CODEX_PROVIDER)),
        format!(
            "{table}.name={}",
            toml_string("OpenAI (through forge's sandbox)")
        ),
        format!("{table}.base_url={}", toml_string(base_url)),
        format!("{table}.env_key={}", toml_string(env_key)),
        format!("{table}.wire_api={}", toml_string("responses")),
    ]
    .into_iter()
    .flat_map(|value| ["-c".to_owned(), value])
    .collect()
}

/// `text` as a TOML string (what codex parses the right of a `-c` as).
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// codex's model provider as its `config.toml` names it.
#[derive(Debug, PartialEq, Eq)]
struct CodexProvider {
    /// `model_provider`; `openai` (built in) when unnamed.
    name: String,
    base_url: Option<String>,
    env_key: Option<String>,
    /// The top-level `openai_base_url`: the built-in provider's base URL.
    openai_base_url: Option<String>,
}

impl Default for CodexProvider {
    fn default() -> Self {
        Self {
            name: "openai".to_owned(),
            base_url: None,
            env_key: None,
            openai_base_url: None,
        }
    }
}

impl CodexProvider {
    /// codex's built-in `openai` provider (a `[model_providers.openai]` table of the
    /// user's with its own base URL is treated as the user's provider).
    fn is_built_in(&self) -> bool {
        self.name == "openai" && self.base_url.is_none()
    }
}

/// `$CODEX_HOME/config.toml` (else `$HOME/.codex/config.toml`): the file the invocation
/// prepares there, else the one on disk.
fn codex_provider(env: &BTreeMap<String, String>, files: &[PreparedFile]) -> Option<CodexProvider> {
    let home = env
        .get("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env.get("HOME").map(|h| Path::new(h).join(".codex")))?;
    let path = home.join("config.toml");
    let text = match files.iter().find(|f| f.path == path).map(|f| &f.source) {
        Some(FileSource::Contents(bytes)) => String::from_utf8(bytes.clone()).ok()?,
        Some(FileSource::CopyOf(from)) => std::fs::read_to_string(from).ok()?,
        Some(FileSource::SymlinkTo(to)) => std::fs::read_to_string(to).ok()?,
        None => std::fs::read_to_string(&path).ok()?,
    };
    Some(parse_codex_config(&text))
}

fn parse_codex_config(text: &str) -> CodexProvider {
    let Ok(table) = text.parse::<toml::Table>() else {
        return CodexProvider::default();
    };
    let name = table
        .get("model_provider")
        .and_then(toml::Value::as_str)
        .unwrap_or("openai");
    let provider = table
        .get("model_providers")
        .and_then(|p| p.get(name))
        .and_then(toml::Value::as_table);
    let text_of = |key: &str| {
        provider
            .and_then(|p| p.get(key))
            .and_then(toml::Value::as_str)
            .map(str::to_owned)
    };
    CodexProvider {
        name: name.to_owned(),
        base_url: text_of("base_url"),
        env_key: text_of("env_key"),
        openai_base_url: table
            .get("openai_base_url")
            .and_then(toml::Value::as_str)
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::sandbox::{RunNetwork, model_wiring};

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn confinement(provider: &str, mcp: Option<u16>) -> Confinement {
        let mut c = Confinement::work_tree("/w");
        c.network = RunNetwork {
            model: model_wiring(provider),
            mcp: mcp.map(|port| Endpoint {
                host: "127.0.0.1".into(),
                port,
            }),
        };
        c
    }

    #[test]
    fn a_loopback_model_keeps_its_address_and_its_key_becomes_a_placeholder() {
        let mut vars = env(&[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4100"),
            ("ANTHROPIC_API_KEY", "sk-real"),
            ("PATH", "/bin"),
        ]);
        let plan = plan(&confinement("claude", Some(5000)), &mut vars, &[], &[]).unwrap();
        assert_eq!(plan.routes.len(), 2);
        assert_eq!(plan.routes[0].addr.to_string(), "127.0.0.1:5000");
        assert!(plan.routes[0].keys.is_empty());
        let model = &plan.routes[1];
        assert_eq!(model.addr.to_string(), "127.0.0.1:4100");
        assert_eq!(model.upstream, None);
        assert_eq!(model.keys.len(), 1);
        assert_eq!(model.keys[0].slot, KeySlot::Header("x-api-key".into()));
        assert_eq!(model.keys[0].value, "sk-real");
        assert_eq!(vars["ANTHROPIC_API_KEY"], model.keys[0].placeholder);
        assert!(vars["ANTHROPIC_API_KEY"].starts_with("forge-sandbox-placeholder-"));
        assert_eq!(vars["ANTHROPIC_BASE_URL"], "http://127.0.0.1:4100");
    }

    #[test]
    fn a_remote_model_is_rewritten_to_a_loopback_route() {
        let mut vars = env(&[("GEMINI_API_KEY", "g-real")]);
        let plan = plan(&confinement("gemini", None), &mut vars, &[], &[]).unwrap();
        let model = &plan.routes[0];
        assert_eq!(model.addr.to_string(), "127.0.0.1:47000");
        assert_eq!(
            model.upstream.as_deref(),
            Some("https://generativelanguage.googleapis.com")
        );
        assert_eq!(vars["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:47000");
        // The header and the query parameter, one placeholder.
        assert_eq!(model.keys.len(), 2);
        assert_eq!(model.keys[0].placeholder, model.keys[1].placeholder);
        assert_eq!(vars["GEMINI_API_KEY"], model.keys[0].placeholder);
    }

    #[test]
    fn codex_reads_its_provider_from_the_prepared_config() {
        let config = "model_provider = \"mock\"\n[model_providers.mock]\n\
                      base_url = \"http://127.0.0.1:4200/v1\"\nenv_key = \"MOCK_API_KEY\"\n";
        let files = vec![PreparedFile {
            path: PathBuf::from("/r/home/.codex/config.toml"),
            source: FileSource::Contents(config.as_bytes().to_vec()),
        }];
        let mut vars = env(&[("CODEX_HOME", "/r/home/.codex"), ("MOCK_API_KEY", "m-real")]);
        let plan = plan(&confinement("codex", None), &mut vars, &files, &[]).unwrap();
        let model = &plan.routes[0];
        assert_eq!(model.addr.to_string(), "127.0.0.1:4200");
        assert_eq!(model.keys[0].value, "m-real");
        assert_eq!(model.keys[0].slot, KeySlot::Header("authorization".into()));
        assert_eq!(vars["MOCK_API_KEY"], model.keys[0].placeholder);
    }

    fn codex_config_file(text: &str) -> Vec<PreparedFile> {
        vec![PreparedFile {
            path: PathBuf::from("/r/home/.codex/config.toml"),
            source: FileSource::Contents(text.as_bytes().to_vec()),
        }]
    }

    #[test]
    fn codex_with_its_built_in_provider_and_a_key_is_given_a_provider_of_forges() {
        let mut vars = env(&[("OPENAI_API_KEY", "o-real"), ("HOME", "/nonexistent")]);
        let plan = plan(&confinement("codex", None), &mut vars, &[], &[]).unwrap();
        let model = &plan.routes[0];
        assert_eq!(model.addr.to_string(), "127.0.0.1:47000");
        assert_eq!(model.upstream.as_deref(), Some("https://api.openai.com"));
        assert_eq!(model.keys[0].value, "o-real");
        assert_eq!(vars["OPENAI_API_KEY"], model.keys[0].placeholder);
        assert!(plan.allow_hosts.is_empty());
        assert_eq!(
            plan.cli_args.join(" "),
            "-c model_provider=\"forge-sandbox\" \
             -c model_providers.forge-sandbox.name=\"OpenAI (through forge's sandbox)\" \
             -c model_providers.forge-sandbox.base_url=\"http://127.0.0.1:47000/v1\" \
             -c model_providers.forge-sandbox.env_key=\"OPENAI_API_KEY\" \
             -c model_providers.forge-sandbox.wire_api=\"responses\""
        );
    }

    #[test]
    fn codex_built_in_provider_at_a_loopback_base_url_keeps_its_address() {
        let files = codex_config_file("openai_base_url = \"http://127.0.0.1:4300/v1\"\n");
        let mut vars = env(&[
            ("CODEX_HOME", "/r/home/.codex"),
            ("CODEX_API_KEY", "c-real"),
        ]);
        let plan = plan(&confinement("codex", None), &mut vars, &files, &[]).unwrap();
        assert_eq!(plan.routes[0].addr.to_string(), "127.0.0.1:4300");
        assert_eq!(plan.routes[0].upstream, None);
        assert!(
            plan.cli_args.contains(
                &"model_providers.forge-sandbox.base_url=\"http://127.0.0.1:4300/v1\"".to_owned()
            ),
            "{:?}",
            plan.cli_args
        );
        assert!(
            plan.cli_args
                .contains(&"model_providers.forge-sandbox.env_key=\"CODEX_API_KEY\"".to_owned())
        );
        assert_eq!(vars["CODEX_API_KEY"], plan.routes[0].keys[0].placeholder);
    }

    #[test]
    fn codex_logged_in_in_its_home_reaches_its_host_through_the_proxy() {
        let mut vars = env(&[("HOME", "/nonexistent")]);
        let allow = [HostPattern::parse("*.crates.io").unwrap()];
        let plan = plan(&confinement("codex", None), &mut vars, &[], &allow).unwrap();
        assert!(plan.routes.is_empty());
        assert!(plan.cli_args.is_empty());
        let hosts: Vec<String> = plan.allow_hosts.into_iter().map(String::from).collect();
        assert_eq!(hosts, ["*.crates.io", "api.openai.com:443"]);
    }

    #[test]
    fn codex_with_a_remote_provider_of_its_own_is_pointed_at_its_route() {
        let files = codex_config_file(
            "model_provider = \"azure\"\n[model_providers.azure]\n\
             base_url = \"https://x.openai.azure.com/openai/v1\"\nenv_key = \"AZURE_KEY\"\n",
        );
        let mut vars = env(&[("CODEX_HOME", "/r/home/.codex"), ("AZURE_KEY", "a-real")]);
        let plan = plan(&confinement("codex", None), &mut vars, &files, &[]).unwrap();
        let model = &plan.routes[0];
        assert_eq!(
            model.upstream.as_deref(),
            Some("https://x.openai.azure.com")
        );
        assert_eq!(
            plan.cli_args,
            [
                "-c",
                "model_providers.azure.base_url=\"http://127.0.0.1:47000/openai/v1\""
            ]
        );
        assert_eq!(vars["AZURE_KEY"], model.keys[0].placeholder);
        assert_eq!(model.keys[0].value, "a-real");
    }

    #[test]
    fn code_and_unknown_agents_reach_only_the_allowed_hosts() {
        let mut vars = env(&[("ANTHROPIC_API_KEY", "k")]);
        let plan = plan(&Confinement::work_tree("/w"), &mut vars, &[], &[]).unwrap();
        assert_eq!(plan, EgressPlan::default());
        assert_eq!(vars["ANTHROPIC_API_KEY"], "k");
    }

    #[test]
    fn codex_config_names_its_provider() {
        let check = |text: &str, base: Option<&str>, key: Option<&str>| {
            let p = parse_codex_config(text);
            assert_eq!(
                (p.base_url.as_deref(), p.env_key.as_deref()),
                (base, key),
                "{text}"
            );
        };
        assert!(parse_codex_config("model = \"o3\"\n").is_built_in());
        assert!(parse_codex_config("model_provider = \"openai\"\n").is_built_in());
        assert!(!parse_codex_config("model_provider = \"mock\"\n").is_built_in());
        assert_eq!(
            parse_codex_config("openai_base_url = \"http://127.0.0.1:9/v1\"\n")
                .openai_base_url
                .as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        check(
            "model_provider = \"m\"\n[model_providers.m]\nbase_url = \"http://x\"\nenv_key = \"K\"\n",
            Some("http://x"),
            Some("K"),
        );
        // Another provider's table is not the one in use.
        check(
            "model_provider = \"a\"\n[model_providers.m]\nbase_url = \"http://x\"\n",
            None,
            None,
        );
        check(
            "[model_providers.openai]\nbase_url = \"http://o\"\n",
            Some("http://o"),
            None,
        );
        check("not toml [", None, None);
    }
}
