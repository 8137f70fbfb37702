mod env;
mod ladder;
mod stderr;
mod stdin;
mod stdout;
mod support;
mod tree;
