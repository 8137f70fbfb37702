mod cli_harness;
mod fixtures;
mod http;
mod real_clis;
mod render;
mod scenarios;
mod side_calls;
mod tool_mapping;
