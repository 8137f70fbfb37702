//! The sandbox's network half, plugged in here: forge-adapter-egress serves each confined
//! process's plan ([`forge_adapter_egress::EgressConfinement`]); the bridge inside is this
//! very executable (`__sandbox-bridge`).

use std::path::PathBuf;

use forge_adapter_egress::EgressConfinement;

/// The egress for this forge's sandbox.
pub fn confinement() -> EgressConfinement {
    EgressConfinement::new(bridge_exe())
}

/// The executable that serves `__sandbox-bridge`.
const FORGE_EXE: &str = "forge-code-agent";

/// forge itself; for a program built on forge's library (`cli/examples/rust_tools.rs`), the
/// `forge-code-agent` beside it (cargo puts examples one directory below), else on PATH.
fn bridge_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    if exe.file_stem().is_some_and(|n| n == FORGE_EXE) {
        return Ok(exe);
    }
    let beside = exe.ancestors().skip(1).take(2).map(|d| d.join(FORGE_EXE));
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(FORGE_EXE))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    beside.chain(on_path).find(|c| c.is_file()).ok_or_else(|| {
        format!(
            "{} is not {FORGE_EXE}, and no {FORGE_EXE} is beside it or on PATH: the sandbox's \
             network bridge runs as `{FORGE_EXE} __sandbox-bridge` (install {FORGE_EXE}, or \
             run with --sandbox off)",
            exe.display()
        )
    })
}
