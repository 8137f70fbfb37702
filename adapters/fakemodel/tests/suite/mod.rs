mod cli_harness;
mod real_clis;
