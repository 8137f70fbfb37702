mod decode;
mod fixtures;
mod flow;
mod session;
