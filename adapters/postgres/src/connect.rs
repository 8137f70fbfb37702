//! Connecting: the URL (its TLS mode, its password from the environment or the password
//! file when it has none), a connection with a deadline, errors that name the database
//! (never its password).

use std::time::Duration;

use forge_domain::ForgeError;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::password;
use crate::tls;

/// How long a connection attempt may take before it is reported: an unreachable server is
/// an error within seconds, never a hang.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `url` names a PostgreSQL server (`postgres://` or `postgresql://`).
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The URL as messages show it: user, host, port and database, never the password.
pub fn display_url(config: &Config) -> String {
    let host = config.get_hosts().first().map_or_else(
        || "localhost".to_owned(),
        |h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        },
    );
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

/// Where and how to connect: tokio-postgres's configuration and the TLS it asked for.
#[derive(Clone)]
pub(crate) struct Target {
    pub config: Config,
    tls: Option<MakeRustlsConnect>,
}

/// Parses `url` into a connection configuration with forge's connect deadline.
/// `env` looks up `PGPASSWORD`, `PGPASSFILE` and `HOME` for a URL without a password.
pub(crate) fn parse(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, ForgeError> {
    if !is_postgres_url(url) {
        return Err(ForgeError::InvalidRequest {
            reason: "a PostgreSQL queue URL starts with postgres:// or postgresql://".to_owned(),
        });
    }
    let (url, mode) = tls::split_url(url)?;
    let mut config: Config = url.parse().map_err(|e| ForgeError::InvalidRequest {
        reason: format!("queue URL: {e}"),
    })?;
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("forge-code-agent");
    if config.get_password().is_none() {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            _ => "localhost".to_owned(),
        };
        let user = config.get_user().unwrap_or_default().to_owned();
        let wanted = password::Wanted {
            host: &host,
            port: config.get_ports().first().copied().unwrap_or(5432),
            dbname: config.get_dbname().unwrap_or(&user),
            user: &user,
        };
        if let Some(found) = password::find(&wanted, env) {
            config.password(found);
        }
    }
    let tls = tls::client_config(&mode)?.map(MakeRustlsConnect::new);
    if tls.is_some() {
        config.ssl_mode(tokio_postgres::config::SslMode::Require);
    }
    Ok(Target { config, tls })
}

/// One connection; its driver runs on its own task and ends when the connection does.
/// `messages` receives what the server sends outside a query (notifications).
pub(crate) async fn connect(
    target: &Target,
    url: &str,
    messages: Option<tokio::sync::mpsc::UnboundedSender<tokio_postgres::Notification>>,
) -> Result<Client, ForgeError> {
    let timed_out = || ForgeError::Io {
        context: format!("task queue {url}: connecting"),
        message: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
    };
    let client = match &target.tls {
        None => {
            let (client, connection) =
                tokio::time::timeout(CONNECT_TIMEOUT, target.config.connect(NoTls))
                    .await
                    .map_err(|_| timed_out())?
                    .map_err(|e| db_error(url, "connecting", &e))?;
            tokio::spawn(drive(connection, messages));
            client
        }
        Some(tls) => {
            let (client, connection) =
                tokio::time::timeout(CONNECT_TIMEOUT, target.config.connect(tls.clone()))
                    .await
                    .map_err(|_| timed_out())?
                    .map_err(|e| db_error(url, "connecting", &e))?;
            tokio::spawn(drive(connection, messages));
            client
        }
    };
    Ok(client)
}

/// The connection's driver: it runs until the connection ends, handing notifications on.
async fn drive<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
    messages: Option<tokio::sync::mpsc::UnboundedSender<tokio_postgres::Notification>>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
        if let (tokio_postgres::AsyncMessage::Notification(n), Some(tx)) = (message, &messages) {
            let _ = tx.send(n);
        }
    }
}

/// A store error naming the database and what forge was doing; a server's own error
/// message (not tokio-postgres's bare "db error").
pub(crate) fn db_error(url: &str, doing: &str, e: &tokio_postgres::Error) -> ForgeError {
    let message = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    };
    ForgeError::Io {
        context: format!("task queue {url}: {doing}"),
        message,
    }
}
