//! Opening the database file: directory, pragmas, migrations.

use std::path::Path;
use std::time::{Duration, Instant};

use forge_domain::ForgeError;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::store_error;
use crate::migrate::migrate;

/// How long a writer waits for another process's transaction before reporting "locked".
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn open(path: &Path, busy: Duration, now_ms: u64) -> Result<Connection, ForgeError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| ForgeError::io(format!("task store: creating {}", dir.display()), e))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let fail = |context: &str, e: rusqlite::Error| store_error(path, context, &e);
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| fail("opening", e))?;
    conn.busy_timeout(busy)
        .map_err(|e| fail("setting the busy timeout", e))?;
    // WAL: readers do not block the writer nor it them; NORMAL sync is durable across a
    // process kill (the case forge cares about), only an OS crash may lose the last commit.
    // A corrupt file fails here, on its first read, with SQLITE_NOTADB.
    let mode = switch_to_wal(&conn, busy).map_err(|e| fail("switching to WAL", e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(ForgeError::Io {
            context: "task store: switching to WAL".to_owned(),
            message: format!("{} stays in journal mode {mode}", path.display()),
        });
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(|e| fail("setting pragmas", e))?;
    migrate(&mut conn, path, now_ms)?;
    Ok(conn)
}

/// `PRAGMA journal_mode = WAL`, retried while another connection holds the file: SQLite
/// answers BUSY at once here, without its busy handler (two processes opening a new file
/// together both try to switch it).
fn switch_to_wal(conn: &Connection, busy: Duration) -> Result<String, rusqlite::Error> {
    let deadline = Instant::now() + busy;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)) {
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done,
        }
    }
}
