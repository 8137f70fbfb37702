//! Which targets the proxy lets through: the allowlist's patterns (the domain's
//! [`HostPattern`]: the package registries and `[sandbox] allow_hosts`) and the addresses
//! that are never reachable through it (loopback, private networks, the cloud metadata
//! service).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use forge_domain::sandbox::{DenyReason, HostPattern};

/// Lower case, without a trailing dot or IPv6 brackets.
pub(crate) fn normalise(host: &str) -> String {
    host.trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// The name-level rule: may the proxy try to reach `host:port` at all? (`host` normalised.)
///
/// # Errors
/// The reason it may not.
#[cfg(test)]
pub(crate) fn check_name(host: &str, port: u16, allow: &[HostPattern]) -> Result<(), DenyReason> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        check_address(ip)?;
    }
    check_name_only(host, port, allow)
}

/// [`check_name`] without the address rule for a literal address (the proxy applies its
/// own address rule first).
///
/// # Errors
/// The reason the name may not be reached.
pub(crate) fn check_name_only(
    host: &str,
    port: u16,
    allow: &[HostPattern],
) -> Result<(), DenyReason> {
    if METADATA_NAMES.contains(&host) {
        return Err(DenyReason::MetadataAddress);
    } else if host == "localhost" || host.ends_with(".localhost") {
        return Err(DenyReason::Loopback);
    }
    if allow.iter().any(|a| a.matches(host, port)) {
        Ok(())
    } else {
        Err(DenyReason::NotAllowed)
    }
}

/// Names of the cloud metadata services.
const METADATA_NAMES: [&str; 2] = ["metadata.google.internal", "metadata"];

/// The address-level rule, applied to a literal target and to every address a name
/// resolves to (so an allowed name cannot lead to the machine itself or its network).
///
/// # Errors
/// The reason the address is never reachable through the proxy.
pub(crate) fn check_address(ip: IpAddr) -> Result<(), DenyReason> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    };
    match ip {
        IpAddr::V4(v4) => check_v4(v4),
        IpAddr::V6(v6) => check_v6(v6),
    }
}

const METADATA_V4: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);
/// AWS's IPv6 metadata endpoint.
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);

fn check_v4(ip: Ipv4Addr) -> Result<(), DenyReason> {
    let [a, b, ..] = ip.octets();
    if ip == METADATA_V4 {
        Err(DenyReason::MetadataAddress)
    } else if ip.is_loopback() || ip.is_unspecified() {
        Err(DenyReason::Loopback)
    } else if ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        // Carrier-grade NAT (100.64/10) and 0/8.
        || (a == 100 && (64..128).contains(&b))
        || a == 0
    {
        Err(DenyReason::PrivateAddress)
    } else {
        Ok(())
    }
}

fn check_v6(ip: Ipv6Addr) -> Result<(), DenyReason> {
    let first = ip.segments()[0];
    if ip == METADATA_V6 {
        Err(DenyReason::MetadataAddress)
    } else if ip.is_loopback() || ip.is_unspecified() {
        Err(DenyReason::Loopback)
    } else if (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link local
        || ip.is_multicast()
    {
        Err(DenyReason::PrivateAddress)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]

    use super::*;

    fn check(target: &str, allow: &[&str], expected: Result<(), DenyReason>) {
        let allow: Vec<HostPattern> = allow.iter().map(|a| a.parse().unwrap()).collect();
        let (host, port) = target.rsplit_once(':').unwrap();
        let got = check_name(&normalise(host), port.parse().unwrap(), &allow);
        assert_eq!(got, expected, "{target} with {allow:?}");
    }

    #[test]
    fn targets() {
        use DenyReason::*;
        let npm = ["registry.npmjs.org"];
        let crates = ["*.crates.io:443"];
        let cases: &[(&str, &[&str], Result<(), DenyReason>)] = &[
            ("registry.npmjs.org:443", &npm, Ok(())),
            ("REGISTRY.npmjs.org.:80", &npm, Ok(())),
            ("static.crates.io:443", &crates, Ok(())),
            ("index.crates.io:443", &crates, Ok(())),
            ("93.184.215.14:443", &["93.184.215.14"], Ok(())),
            // Look-alikes that must not pass.
            ("registry.npmjs.org.evil.com:443", &npm, Err(NotAllowed)),
            ("evilregistry.npmjs.org:443", &npm, Err(NotAllowed)),
            ("crates.io:443", &crates, Err(NotAllowed)),
            ("evilcrates.io:443", &crates, Err(NotAllowed)),
            ("static.crates.io:80", &crates, Err(NotAllowed)),
            ("example.com:443", &[], Err(NotAllowed)),
            // Never through the proxy, even when listed.
            (
                "169.254.169.254:80",
                &["169.254.169.254"],
                Err(MetadataAddress),
            ),
            (
                "metadata.google.internal:80",
                &["metadata.google.internal"],
                Err(MetadataAddress),
            ),
            ("[fd00:ec2::254]:80", &[], Err(MetadataAddress)),
            ("127.0.0.1:8080", &["127.0.0.1"], Err(Loopback)),
            ("127.1.2.3:22", &[], Err(Loopback)),
            ("localhost:22", &["localhost"], Err(Loopback)),
            ("[::1]:22", &[], Err(Loopback)),
            ("[::ffff:127.0.0.1]:22", &[], Err(Loopback)),
            ("0.0.0.0:22", &[], Err(Loopback)),
            ("10.0.0.5:5432", &["10.0.0.5"], Err(PrivateAddress)),
            ("192.168.1.1:80", &[], Err(PrivateAddress)),
            ("172.16.0.1:80", &[], Err(PrivateAddress)),
            ("169.254.1.1:80", &[], Err(PrivateAddress)),
            ("100.100.100.200:80", &[], Err(PrivateAddress)),
            ("[fe80::1]:80", &[], Err(PrivateAddress)),
            ("[fd12::1]:80", &[], Err(PrivateAddress)),
        ];
        for (target, allow, expected) in cases {
            check(target, allow, *expected);
        }
    }
}
