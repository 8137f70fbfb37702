mod delivery;
mod faults;
mod harness;
mod rate_limit;
mod run;
mod stream_cancel;
mod tap;
mod task;
