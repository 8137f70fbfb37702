mod env;
mod inherited_signals;
mod ladder;
mod stderr;
mod stdin;
mod stdout;
mod support;
mod tree;
