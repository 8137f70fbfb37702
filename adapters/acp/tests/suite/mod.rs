mod fixtures;
mod flow;
