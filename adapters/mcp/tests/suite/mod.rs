mod client;
mod fixtures;
mod server;
