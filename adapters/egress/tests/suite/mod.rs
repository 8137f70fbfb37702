mod bridge;
mod sandbox;
mod support;
