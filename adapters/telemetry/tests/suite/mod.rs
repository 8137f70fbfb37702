mod ids;
mod init;
mod logger;
mod metrics;
