mod faults;
mod harness;
mod run;
mod stream_cancel;
mod tools;
