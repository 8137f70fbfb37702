mod common;
mod config_cost;
mod detect;
mod fixtures;
mod invocation;
mod props;
mod robustness;
mod scenarios;
