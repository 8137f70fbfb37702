//! The sandbox's pure half (issue 31): what a run may read, write, see of the environment
//! and reach on the network, as data and rules. The enforcement adapter
//! (`adapters/sandbox`) turns these into a bubblewrap command line; the egress adapter
//! (`adapters/egress`) asks [`net::decide`] for every connection.

pub mod confinement;
pub mod denial;
pub mod egress;
pub mod env;
pub mod fs;
pub mod model;
pub mod net;
pub mod protected;
pub mod registries;
pub mod settings;

pub use confinement::{
    Confinement, STATE_DIR_VARS, TOOLCHAIN_CACHE_VARS, TOOLCHAIN_CACHES_IN_HOME, WorkTreeAccess,
    bindable, cli_state_in_home, paths_named, state_dirs_named, toolchain_caches_named,
};
pub use denial::{DenyReason, SandboxDenial, unreachable_lines};
pub use egress::{EgressKey, EgressPlan, EgressRoute};
pub use env::{EnvVerdict, env_verdict, provider_credentials};
pub use fs::{FsFacts, Mount, fs_plan};
pub use model::{
    BaseUrl, KeySlot, KeyUse, ModelRoute, ModelWiring, RunNetwork, mcp_endpoint, model_route,
    model_wiring,
};
pub use net::{Endpoint, HostPattern, NetPolicy, NetVerdict};
pub use registries::{REGISTRIES, Registry, registry_hosts};
pub use settings::{SandboxMode, SandboxSettings};
