mod autoloop;
mod faults;
mod harness;
mod run;
mod stream_cancel;
