mod common;
mod detect;
mod fixtures;
mod invocation;
mod props;
mod robustness;
mod scenarios;
