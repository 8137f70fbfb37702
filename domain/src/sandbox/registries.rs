//! The package registries a confined run reaches by default (issue 42): a build, an install
//! step or the agent fetching a dependency (`cargo build`, `npm ci`, `pip install`, `go mod
//! download`, `mvn`, `bundle install`) must not need `[sandbox] allow_hosts` on the first
//! task. Read-only downloads over HTTPS, through forge's proxy like any other host; no
//! registry credential enters (a token is the user's to pass with `env_pass`).
//! `[sandbox] registries = false` shuts the preset; `allow_hosts` adds to it.

use super::net::HostPattern;

/// One registry of the preset: its name (for the docs) and the hosts it is served from,
/// each on port 443 only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registry {
    pub name: &'static str,
    pub hosts: &'static [&'static str],
}

/// The preset: what `docs/confinement.md` lists.
pub const REGISTRIES: &[Registry] = &[
    Registry {
        name: "crates.io",
        // The sparse index, the downloads, and the API that redirects to them.
        hosts: &["index.crates.io", "static.crates.io", "crates.io"],
    },
    Registry {
        name: "npm",
        hosts: &["registry.npmjs.org"],
    },
    Registry {
        name: "PyPI",
        hosts: &["pypi.org", "files.pythonhosted.org"],
    },
    Registry {
        name: "Go module proxy",
        hosts: &["proxy.golang.org", "sum.golang.org"],
    },
    Registry {
        name: "Maven Central",
        hosts: &["repo.maven.apache.org", "repo1.maven.org"],
    },
    Registry {
        name: "RubyGems",
        hosts: &["rubygems.org", "index.rubygems.org"],
    },
];

/// The registries' hosts as allowlist entries (`host:443`).
pub fn registry_hosts() -> Vec<HostPattern> {
    REGISTRIES
        .iter()
        .flat_map(|r| r.hosts.iter())
        .filter_map(|host| HostPattern::parse(&format!("{host}:443")).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_of_the_preset_is_a_pattern() {
        let count: usize = REGISTRIES.iter().map(|r| r.hosts.len()).sum();
        assert_eq!(registry_hosts().len(), count);
    }

    #[test]
    fn the_preset_opens_the_registries_and_nothing_like_them() {
        let hosts = registry_hosts();
        let check = |host: &str, port: u16, open: bool| {
            assert_eq!(
                hosts.iter().any(|p| p.matches(host, port)),
                open,
                "{host}:{port}"
            );
        };
        for (host, port) in [
            ("index.crates.io", 443),
            ("static.crates.io", 443),
            ("crates.io", 443),
            ("registry.npmjs.org", 443),
            ("pypi.org", 443),
            ("files.pythonhosted.org", 443),
            ("proxy.golang.org", 443),
            ("sum.golang.org", 443),
            ("repo.maven.apache.org", 443),
            ("repo1.maven.org", 443),
            ("rubygems.org", 443),
            ("index.rubygems.org", 443),
        ] {
            check(host, port, true);
        }
        // Look-alikes that must stay shut: other ports, subdomains and suffixes, uploads,
        // the code hosts a dependency could name.
        for (host, port) in [
            ("index.crates.io", 80),
            ("pypi.org", 22),
            ("evil.index.crates.io", 443),
            ("index.crates.io.evil.com", 443),
            ("evilcrates.io", 443),
            ("registry.npmjs.org.evil.com", 443),
            ("npmjs.org", 443),
            ("upload.pypi.org", 443),
            ("test.pypi.org", 443),
            ("pythonhosted.org", 443),
            ("golang.org", 443),
            ("maven.org", 443),
            ("github.com", 443),
            ("raw.githubusercontent.com", 443),
            ("exfil.example.com", 443),
        ] {
            check(host, port, false);
        }
    }
}
