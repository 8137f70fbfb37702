mod artifacts;
mod listing;
mod workspace;
