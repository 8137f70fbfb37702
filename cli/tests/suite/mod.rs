mod config;
mod doctor;
mod events_equal_run;
mod exit_codes;
mod harness;
mod help;
mod run_output;
mod sigint;
