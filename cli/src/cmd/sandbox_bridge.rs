//! `__sandbox-bridge`: the sandbox's init (forge-adapter-egress's bridge). Its exit code is
//! the command's; 125 when the bridge itself cannot start.

use std::io::Write as _;

use forge_adapter_egress::{BridgeSpec, run_bridge};

use crate::args::SandboxBridgeArgs;

/// The bridge could not start (the same code `run_bridge` uses).
const BRIDGE_FAILED: u8 = 125;

pub(crate) fn run(args: &SandboxBridgeArgs) -> u8 {
    match BridgeSpec::from_json(&args.spec) {
        Ok(spec) => u8::try_from(run_bridge(&spec, &args.argv)).unwrap_or(BRIDGE_FAILED),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "forge sandbox bridge: bad --spec: {e}");
            BRIDGE_FAILED
        }
    }
}
