//! Test support: `forge-egress-bridge --spec <json> -- <argv>…`, what
//! `forge-code-agent __sandbox-bridge` does, without building the whole CLI (the
//! subcommand's name is accepted first, as `Egress::bridge_args` writes it).

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // `Egress::bridge_args` names forge's subcommand: take it as forge would.
    if args.first().is_some_and(|a| a == "__sandbox-bridge") {
        args.remove(0);
    }
    let code = match args.as_slice() {
        [flag, spec, dashes, argv @ ..] if flag == "--spec" && dashes == "--" => {
            match spec
                .to_str()
                .map(forge_adapter_egress::BridgeSpec::from_json)
            {
                Some(Ok(spec)) => forge_adapter_egress::run_bridge(&spec, argv),
                _ => {
                    let _ = writeln!(std::io::stderr(), "forge-egress-bridge: bad --spec");
                    125
                }
            }
        }
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "usage: forge-egress-bridge --spec <json> -- <argv>…"
            );
            125
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(125))
}
