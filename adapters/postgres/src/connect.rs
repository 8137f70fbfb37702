//! Connecting: the URL, a connection with a deadline, errors that name the database (never
//! its password).

use std::time::Duration;

use forge_domain::ForgeError;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls};

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

/// Parses `url` into a connection configuration with forge's connect deadline.
pub(crate) fn parse(url: &str) -> Result<Config, ForgeError> {
    if !is_postgres_url(url) {
        return Err(ForgeError::InvalidRequest {
            reason: "a PostgreSQL queue URL starts with postgres:// or postgresql://".to_owned(),
        });
    }
    let mut config: Config = url.parse().map_err(|e| ForgeError::InvalidRequest {
        reason: format!("queue URL: {e}"),
    })?;
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("forge-code-agent");
    Ok(config)
}

/// One connection; its driver runs on its own task and ends when the connection does.
/// `messages` receives what the server sends outside a query (notifications).
pub(crate) async fn connect(
    config: &Config,
    url: &str,
    messages: Option<tokio::sync::mpsc::UnboundedSender<tokio_postgres::Notification>>,
) -> Result<Client, ForgeError> {
    let attempt = config.connect(NoTls);
    let (client, mut connection) = tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .map_err(|_| ForgeError::Io {
            context: format!("task queue {url}: connecting"),
            message: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
        })?
        .map_err(|e| db_error(url, "connecting", &e))?;
    tokio::spawn(async move {
        while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            if let (tokio_postgres::AsyncMessage::Notification(n), Some(tx)) = (message, &messages)
            {
                let _ = tx.send(n);
            }
        }
    });
    Ok(client)
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
