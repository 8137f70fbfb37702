//! Where a confined run may connect: its model endpoint(s), forge's MCP server for the run,
//! and `[sandbox] allow_hosts` — nothing else, loopback included, and never a cloud metadata
//! address. The egress proxy asks [`NetPolicy::decide`] for each connection.

use serde::{Deserialize, Serialize};

/// A host and port the run may reach exactly (the model's `127.0.0.1:PORT`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

/// An `allow_hosts` entry: `example.org` (any port), `example.org:443`, `*.crates.io`
/// (subdomains only, not `crates.io` itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostPattern {
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl HostPattern {
    /// # Errors
    /// The reason the text is not a host pattern.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| format!("{text:?}: the port must be a number"))?;
                (host, Some(port))
            }
            _ => (text, None),
        };
        let (host, wildcard) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        let ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !ok {
            return Err(format!(
                "{text:?} is not a host name (letters, digits, '.', '-', an optional '*.' and ':port')"
            ));
        }
        Ok(Self {
            host: host.to_ascii_lowercase(),
            wildcard,
            port,
        })
    }

    /// Whether `host` (lower case, without a trailing dot) at `port` is this entry.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        if self.wildcard {
            host.strip_suffix(&self.host)
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
        } else {
            host == self.host
        }
    }
}

impl std::str::FromStr for HostPattern {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

impl TryFrom<String> for HostPattern {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

impl From<HostPattern> for String {
    fn from(p: HostPattern) -> String {
        let star = if p.wildcard { "*." } else { "" };
        match p.port {
            Some(port) => format!("{star}{}:{port}", p.host),
            None => format!("{star}{}", p.host),
        }
    }
}

/// Addresses no run reaches, whatever `allow_hosts` says: the cloud metadata services.
pub const NEVER: &[&str] = &[
    "169.254.169.254",
    "fd00:ec2::254",
    "metadata.google.internal",
    "metadata",
    "100.100.100.200",
];

/// The network rule of one run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NetPolicy {
    /// The provider's model endpoint(s) and forge's MCP server for the run.
    pub endpoints: Vec<Endpoint>,
    pub allow_hosts: Vec<HostPattern>,
}

/// The answer for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetVerdict {
    Allow,
    Deny(String),
}

impl NetPolicy {
    /// Whether the run may connect to `host:port`.
    pub fn decide(&self, host: &str, port: u16) -> NetVerdict {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let host = host.trim_end_matches('.');
        if NEVER.contains(&host) {
            return NetVerdict::Deny("a cloud metadata address".to_owned());
        }
        if self
            .endpoints
            .iter()
            .any(|e| e.host == host && e.port == port)
        {
            return NetVerdict::Allow;
        }
        if self.allow_hosts.iter().any(|p| p.matches(host, port)) {
            return NetVerdict::Allow;
        }
        NetVerdict::Deny("not the run's model, its MCP server or [sandbox] allow_hosts".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> NetPolicy {
        NetPolicy {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 4100,
            }],
            allow_hosts: [
                "registry.npmjs.org",
                "*.crates.io",
                "pypi.org:443",
                "169.254.169.254",
            ]
            .iter()
            .map(|p| HostPattern::parse(p).unwrap())
            .collect(),
        }
    }

    #[test]
    fn decisions() {
        let p = policy();
        let check = |host: &str, port: u16, allow: bool| {
            assert_eq!(
                p.decide(host, port) == NetVerdict::Allow,
                allow,
                "{host}:{port}"
            );
        };
        check("127.0.0.1", 4100, true);
        check("registry.npmjs.org", 443, true);
        check("REGISTRY.npmjs.org.", 443, true);
        check("static.crates.io", 443, true);
        check("index.crates.io", 80, true);
        check("pypi.org", 443, true);
        // Look-alikes that must not fire.
        check("127.0.0.1", 4101, false);
        check("localhost", 4100, false);
        check("127.0.0.1", 22, false);
        check("crates.io", 443, false);
        check("evilcrates.io", 443, false);
        check("crates.io.evil.com", 443, false);
        check("registry.npmjs.org.evil.com", 443, false);
        check("pypi.org", 80, false);
        check("npmjs.org", 443, false);
        // Never, even when allow_hosts names it.
        check("169.254.169.254", 80, false);
        check("metadata.google.internal", 80, false);
        check("[fd00:ec2::254]", 80, false);
    }

    #[test]
    fn patterns_parse_and_print_back() {
        let check = |text: &str, want: Result<&str, ()>| {
            let got = HostPattern::parse(text).map(String::from).map_err(|_| ());
            assert_eq!(got.as_deref().map_err(|_| ()), want, "{text}");
        };
        check("Example.org", Ok("example.org"));
        check("*.crates.io", Ok("*.crates.io"));
        check("pypi.org:443", Ok("pypi.org:443"));
        check("", Err(()));
        check("pypi.org:https", Err(()));
        check("http://pypi.org", Err(()));
        check("a b", Err(()));
        check("*", Err(()));
    }
}
