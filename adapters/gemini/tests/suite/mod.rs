mod detect;
mod fixtures;
mod home_view;
mod invocation;
mod json_mode;
mod props;
mod robustness;
mod support;
