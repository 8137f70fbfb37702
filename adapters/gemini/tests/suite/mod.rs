mod detect;
mod fixtures;
mod invocation;
mod json_mode;
mod props;
mod robustness;
mod support;
mod system_settings;
