//! [`PgQueue`]: the [`TaskQueue`] port over one PostgreSQL database.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue::{
    DEAD_ERROR_FORMAT, Finish, Heartbeat, NO_WORKER, QueueDelivery, QueueEvent, QueueSubmission,
    QueuedTask, TAKEN_OVER_FORMAT, refusal,
};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use tokio::sync::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement};

use crate::connect::{Target, connect, db_error, display_url, parse};
use crate::listen::{EVENTS_CHANNEL, EventFeed, Listener, WORK_CHANNEL};
use crate::migrate::migrate;
use crate::rows::{TASK_COLUMNS, event_from, qualified_task_columns, task_from};

/// A handle on the queue; cheap to clone. One connection for statements (tokio-postgres
/// pipelines concurrent calls on it; each statement prepared once per connection, so a call
/// is one round trip) and one for `LISTEN`, each made again after the server went away.
#[derive(Clone)]
pub struct PgQueue {
    inner: Arc<Inner>,
}

struct Inner {
    /// The URL as messages show it (no password).
    url: String,
    config: Target,
    client: Mutex<Option<Conn>>,
    listener: Mutex<Option<Listener>>,
    /// The `LISTEN forge_events` connection every event reader in this process shares.
    event_feed: Mutex<Option<EventFeed>>,
    /// The `LISTEN forge_queue, forge_events` connection of [`TaskQueue::wait_for_changes`].
    change_feed: Mutex<Option<EventFeed>>,
}

/// The statement connection and the statements prepared on it (a statement belongs to its
/// connection: a new connection starts with none).
#[derive(Clone)]
struct Conn {
    client: Arc<Client>,
    prepared: Arc<std::sync::Mutex<HashMap<String, Statement>>>,
}

impl Conn {
    fn new(client: Client) -> Self {
        Self {
            client: Arc::new(client),
            prepared: Arc::default(),
        }
    }

    /// `sql` prepared on this connection: from the cache, else prepared now (a round trip,
    /// once per connection and statement).
    async fn statement(&self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        let cached = self
            .prepared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(sql)
            .cloned();
        if let Some(statement) = cached {
            return Ok(statement);
        }
        let statement = self.client.prepare(sql).await?;
        self.prepared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Drops `sql`'s statement (after it failed: it may be stale, e.g. the schema changed).
    fn forget(&self, sql: &str) {
        self.prepared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(sql);
    }
}

impl std::fmt::Debug for PgQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgQueue")
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

impl PgQueue {
    /// Connects to the database at `url` and brings its schema up to date.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for a URL that is not a PostgreSQL URL or does not
    /// parse; [`ForgeError::Io`] naming the server when it cannot be reached within
    /// seconds, refuses the connection, or has a newer schema than this forge knows.
    pub async fn connect(url: &str) -> Result<Self, ForgeError> {
        Self::connect_with(url, &|name| std::env::var(name).ok()).await
    }

    /// [`PgQueue::connect`] with the environment `env` looks `PGPASSWORD`, `PGPASSFILE` and
    /// `HOME` up in (for a URL without a password).
    ///
    /// # Errors
    /// As [`PgQueue::connect`].
    pub async fn connect_with(
        url: &str,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<Self, ForgeError> {
        let config = parse(url, env)?;
        let shown = display_url(&config.config);
        let mut client = connect(&config, &shown, None).await?;
        migrate(&mut client, &shown).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                url: shown,
                config,
                client: Mutex::new(Some(Conn::new(client))),
                listener: Mutex::new(None),
                event_feed: Mutex::new(None),
                change_feed: Mutex::new(None),
            }),
        })
    }

    /// The URL without its password.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The statement connection, made again when the last one closed.
    async fn conn(&self) -> Result<Conn, ForgeError> {
        let mut slot = self.inner.client.lock().await;
        if let Some(conn) = slot.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok(conn.clone());
        }
        *slot = None;
        let conn = Conn::new(connect(&self.inner.config, &self.inner.url, None).await?);
        *slot = Some(conn.clone());
        Ok(conn)
    }

    pub(crate) async fn query(
        &self,
        doing: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, ForgeError> {
        let conn = self.conn().await?;
        let rows = match conn.statement(sql).await {
            Ok(statement) => conn.client.query(&statement, params).await,
            Err(e) => Err(e),
        };
        match rows {
            Ok(rows) => Ok(rows),
            Err(e) => {
                conn.forget(sql);
                if connection_lost(&e) {
                    // The connection is gone (its driver may not have noticed yet): the
                    // next call connects again.
                    let mut slot = self.inner.client.lock().await;
                    if slot
                        .as_ref()
                        .is_some_and(|c| Arc::ptr_eq(&c.client, &conn.client))
                    {
                        *slot = None;
                    }
                }
                Err(db_error(&self.inner.url, doing, &e))
            }
        }
    }

    fn tasks_of(&self, rows: &[Row]) -> Result<Vec<QueuedTask>, ForgeError> {
        rows.iter().map(|r| task_from(r, &self.inner.url)).collect()
    }

    fn first_task(&self, rows: &[Row]) -> Result<Option<QueuedTask>, ForgeError> {
        rows.first()
            .map(|r| task_from(r, &self.inner.url))
            .transpose()
    }
}

/// Whether the error means the connection is gone: closed, an I/O failure, or the server
/// ending it (class 57P: shutdown, terminated by an administrator; class 08: connection).
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            code.starts_with("57P") || code.starts_with("08")
        }
    }
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn int32(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

#[async_trait]
impl TaskQueue for PgQueue {
    async fn submit(&self, task: &QueueSubmission) -> Result<QueuedTask, ForgeError> {
        let sql = format!(
            "WITH ins AS (
                INSERT INTO queue_tasks
                    (task_id, state, repo, prompt, options, max_attempts, submitted_at_ms)
                VALUES ($1, 'queued', $2, $3, $4, $5, forge_now_ms())
                ON CONFLICT (task_id) DO NOTHING
                RETURNING {TASK_COLUMNS})
             SELECT ins.*, pg_notify('{WORK_CHANNEL}', ins.task_id) FROM ins"
        );
        let rows = self
            .query(
                "submitting a task",
                &sql,
                &[
                    &task.task_id.as_str(),
                    &task.repo,
                    &task.prompt,
                    &task.options,
                    &int32(task.max_attempts.max(1)),
                ],
            )
            .await?;
        self.first_task(&rows)?
            .ok_or_else(|| refusal::already_queued(&task.task_id))
    }

    async fn claim(&self, worker: &str, lease_ms: u64) -> Result<Option<QueuedTask>, ForgeError> {
        // The tasks whose worker was lost for the last time (or after a cancel) end here
        // instead of being claimed again (as `lost_task_end` says, worded by the domain's
        // formats). The claim below skips exactly those, so the two statements are
        // independent: sent together, pipelined on the connection, they cost one round trip.
        let end_lost = self.query(
            "ending lost tasks",
            "UPDATE queue_tasks SET
                state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'dead' END,
                last_error = CASE WHEN cancel_requested THEN last_error ELSE format(
                    $1::text, attempts, COALESCE(worker, $2::text)) END,
                lease_until_ms = NULL,
                finished_at_ms = forge_now_ms()
             WHERE task_id IN (
                SELECT task_id FROM queue_tasks
                WHERE state = 'running' AND lease_until_ms < forge_now_ms()
                  AND (attempts >= max_attempts OR cancel_requested)
                FOR UPDATE SKIP LOCKED)",
            &[&DEAD_ERROR_FORMAT, &NO_WORKER],
        );
        // The attempt's first event, `claimed`, is stored by the same statement: one
        // commit, and no reader sees a running task without it.
        let sql = format!(
            "WITH c AS (
                UPDATE queue_tasks t SET
                    state = 'running',
                    worker = $1,
                    attempts = t.attempts + 1,
                    lease_until_ms = forge_now_ms() + $2,
                    started_at_ms = forge_now_ms(),
                    last_error = CASE WHEN t.state = 'running'
                        THEN format($3::text, t.worker) ELSE t.last_error END,
                    event_seq = t.event_seq + 1
                 FROM (
                    SELECT task_id FROM queue_tasks
                    WHERE state = 'queued'
                       OR (state = 'running' AND lease_until_ms < forge_now_ms()
                           AND attempts < max_attempts AND NOT cancel_requested)
                    ORDER BY position
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED) picked
                 WHERE t.task_id = picked.task_id
                 RETURNING {}, t.event_seq AS claimed_seq),
             e AS (
                INSERT INTO queue_events (task_id, task_seq, at_ms, kind, data)
                SELECT task_id, claimed_seq, forge_now_ms(), 'claimed',
                    jsonb_build_object('worker', worker, 'attempt', attempts)
                FROM c)
             SELECT c.*, pg_notify('{EVENTS_CHANNEL}', c.task_id || ' ' || c.claimed_seq)
             FROM c",
            qualified_task_columns()
        );
        let lease = int(lease_ms);
        let params: [&(dyn ToSql + Sync); 3] = [&worker, &lease, &TAKEN_OVER_FORMAT];
        let claim = self.query("claiming a task", &sql, &params);
        let (ended, rows) = tokio::join!(end_lost, claim);
        ended?;
        self.first_task(&rows?)
    }

    async fn heartbeat(
        &self,
        id: &TaskId,
        worker: &str,
        lease_ms: u64,
    ) -> Result<Heartbeat, ForgeError> {
        let rows = self
            .query(
                "renewing a lease",
                "UPDATE queue_tasks SET lease_until_ms = forge_now_ms() + $3
                 WHERE task_id = $1 AND worker = $2 AND state = 'running'
                 RETURNING cancel_requested",
                &[&id.as_str(), &worker, &int(lease_ms)],
            )
            .await?;
        Ok(Heartbeat::of_renewal(
            rows.first().map(|r| r.get::<_, bool>(0)),
        ))
    }

    async fn finish(&self, id: &TaskId, worker: &str, finish: &Finish) -> Result<bool, ForgeError> {
        finish.check()?;
        // The result and the `finished` event in one statement: one commit, and the event
        // is stored exactly when the result is.
        let sql = format!(
            "WITH f AS (
                UPDATE queue_tasks SET state = $3, exit_code = $4,
                    last_error = COALESCE($5, last_error), report = $6,
                    lease_until_ms = NULL, finished_at_ms = forge_now_ms(),
                    event_seq = event_seq + 1
                WHERE task_id = $1 AND worker = $2 AND state = 'running'
                RETURNING task_id, event_seq),
             e AS (
                INSERT INTO queue_events (task_id, task_seq, at_ms, kind, data)
                SELECT task_id, event_seq, forge_now_ms(), 'finished',
                    jsonb_build_object('state', $3::text, 'exit_code', $4::integer)
                FROM f)
             SELECT f.task_id, pg_notify('{EVENTS_CHANNEL}', f.task_id || ' ' || f.event_seq)
             FROM f"
        );
        let rows = self
            .query(
                "recording a result",
                &sql,
                &[
                    &id.as_str(),
                    &worker,
                    &finish.state.as_str(),
                    &finish.exit_code,
                    &finish.error,
                    &finish.report,
                ],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn record_delivery(&self, delivery: &QueueDelivery) -> Result<QueueDelivery, ForgeError> {
        let doing = "recording a delivery";
        let id = delivery.task_id.as_str();
        // The INSERT names the task in its SELECT, so a delivery of no task inserts nothing
        // (and is told apart below); a second delivery of a task hits the primary key.
        self.query(
            doing,
            "INSERT INTO queue_deliveries (task_id, branch, commit_id, worker, at_ms)
             SELECT task_id, $2, $3, $4, forge_now_ms() FROM queue_tasks WHERE task_id = $1
             ON CONFLICT (task_id) DO NOTHING",
            &[&id, &delivery.branch, &delivery.commit, &delivery.worker],
        )
        .await?;
        let rows = self
            .query(
                doing,
                "SELECT branch, commit_id, worker, at_ms FROM queue_deliveries WHERE task_id = $1",
                &[&id],
            )
            .await?;
        let Some(row) = rows.first() else {
            return Err(refusal::no_such_task(id));
        };
        let read = |e: tokio_postgres::Error| db_error(&self.inner.url, doing, &e);
        let at_ms: i64 = row.try_get(3).map_err(read)?;
        Ok(QueueDelivery {
            task_id: delivery.task_id.clone(),
            branch: row.try_get(0).map_err(read)?,
            commit: row.try_get(1).map_err(read)?,
            worker: row.try_get(2).map_err(read)?,
            at_ms: u64::try_from(at_ms).unwrap_or(0),
        })
    }

    async fn release(&self, id: &TaskId, worker: &str) -> Result<bool, ForgeError> {
        let sql = format!(
            "UPDATE queue_tasks SET state = 'queued', attempts = GREATEST(attempts - 1, 0),
                lease_until_ms = NULL
             WHERE task_id = $1 AND worker = $2 AND state = 'running'
             RETURNING pg_notify('{WORK_CHANNEL}', task_id)"
        );
        let rows = self
            .query("handing a task back", &sql, &[&id.as_str(), &worker])
            .await?;
        Ok(!rows.is_empty())
    }

    async fn cancel(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        let sql = format!(
            "UPDATE queue_tasks SET
                cancel_requested = cancel_requested OR state = 'running',
                finished_at_ms = CASE WHEN state = 'queued'
                    THEN forge_now_ms() ELSE finished_at_ms END,
                state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END
             WHERE task_id = $1
             RETURNING {TASK_COLUMNS}, pg_notify('{EVENTS_CHANNEL}', task_id || ' 0')"
        );
        let rows = self
            .query("cancelling a task", &sql, &[&id.as_str()])
            .await?;
        self.first_task(&rows)
    }

    async fn task(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM queue_tasks WHERE task_id = $1");
        let rows = self.query("reading a task", &sql, &[&id.as_str()]).await?;
        self.first_task(&rows)
    }

    async fn tasks(&self, limit: u32) -> Result<Vec<QueuedTask>, ForgeError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM queue_tasks ORDER BY position DESC LIMIT $1");
        let rows = self
            .query("listing tasks", &sql, &[&i64::from(limit)])
            .await?;
        self.tasks_of(&rows)
    }

    async fn append_event(
        &self,
        id: &TaskId,
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<u64, ForgeError> {
        // The task row's counter numbers the event: the UPDATE's row lock orders two
        // appends to one task, and no row (an unknown task) stores nothing.
        let sql = format!(
            "WITH t AS (
                UPDATE queue_tasks SET event_seq = event_seq + 1 WHERE task_id = $1
                RETURNING task_id, event_seq),
             e AS (
                INSERT INTO queue_events (task_id, task_seq, at_ms, kind, data)
                SELECT task_id, event_seq, forge_now_ms(), $2, $3 FROM t
                RETURNING task_id, task_seq)
             SELECT e.task_seq, pg_notify('{EVENTS_CHANNEL}', e.task_id || ' ' || e.task_seq)
             FROM e"
        );
        let rows = self
            .query("storing an event", &sql, &[&id.as_str(), &kind, data])
            .await?;
        stored_seq(&rows, id)
    }

    async fn append_events(
        &self,
        id: &TaskId,
        events: &[(String, serde_json::Value)],
    ) -> Result<u64, ForgeError> {
        if events.is_empty() {
            return Ok(0);
        }
        let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
        let data: Vec<&serde_json::Value> = events.iter().map(|(_, d)| d).collect();
        let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
        // One statement: the counter moves by the batch's size under the row lock, the
        // events take the numbers below it in order, one NOTIFY names the last.
        let sql = format!(
            "WITH t AS (
                UPDATE queue_tasks SET event_seq = event_seq + $4 WHERE task_id = $1
                RETURNING task_id, event_seq),
             e AS (
                INSERT INTO queue_events (task_id, task_seq, at_ms, kind, data)
                SELECT t.task_id, t.event_seq - $4 + b.n, forge_now_ms(), b.kind, b.data
                FROM t, unnest($2::text[], $3::jsonb[]) WITH ORDINALITY AS b(kind, data, n)
                RETURNING task_id, task_seq),
             last AS (SELECT task_id, max(task_seq) AS seq FROM e GROUP BY task_id)
             SELECT seq, pg_notify('{EVENTS_CHANNEL}', task_id || ' ' || seq) FROM last"
        );
        let rows = self
            .query(
                "storing events",
                &sql,
                &[&id.as_str(), &kinds, &data, &count],
            )
            .await?;
        stored_seq(&rows, id)
    }

    async fn events(&self, id: &TaskId, after: u64) -> Result<Vec<QueueEvent>, ForgeError> {
        let rows = self
            .query(
                "reading events",
                "SELECT task_seq, task_id, at_ms, kind, data FROM queue_events
                 WHERE task_id = $1 AND task_seq > $2 ORDER BY task_seq",
                &[&id.as_str(), &int(after)],
            )
            .await?;
        rows.iter()
            .map(|r| event_from(r, &self.inner.url))
            .collect()
    }

    async fn wait_for_events(&self, _id: &TaskId, timeout_ms: u64) -> Result<(), ForgeError> {
        let mut feed = {
            let mut slot = self.inner.event_feed.lock().await;
            match slot.as_ref().filter(|f| f.is_open()) {
                Some(feed) => feed.subscribe(),
                None => {
                    let feed = EventFeed::start(&self.inner.config, &self.inner.url).await?;
                    let rx = feed.subscribe();
                    *slot = Some(feed);
                    rx
                }
            }
        };
        let timeout = std::time::Duration::from_millis(timeout_ms);
        // A closed feed (the server went away) ends the wait: the caller reads again and
        // the next wait listens anew.
        let _ = tokio::time::timeout(timeout, feed.changed()).await;
        Ok(())
    }

    async fn wait_for_changes(&self, seen: u64, timeout_ms: u64) -> Result<u64, ForgeError> {
        let mut feed = {
            let mut slot = self.inner.change_feed.lock().await;
            match slot.as_ref().filter(|f| f.is_open()) {
                Some(feed) => feed.subscribe(),
                None => {
                    // A new connection: what changed while none listened is unknown, so
                    // its counter moves on and the caller reads again.
                    let from = slot.as_ref().map_or(1, |f| f.count().wrapping_add(1));
                    let feed =
                        EventFeed::changes(&self.inner.config, &self.inner.url, from).await?;
                    let rx = feed.subscribe();
                    *slot = Some(feed);
                    rx
                }
            }
        };
        let now = *feed.borrow();
        if now != seen {
            return Ok(now);
        }
        let timeout = std::time::Duration::from_millis(timeout_ms);
        let _ = tokio::time::timeout(timeout, feed.changed()).await;
        let now = *feed.borrow();
        Ok(now)
    }

    async fn wait_for_work(&self, timeout_ms: u64) -> Result<(), ForgeError> {
        let mut slot = self.inner.listener.lock().await;
        if slot.is_none() {
            *slot = Some(Listener::open(&self.inner.config, &self.inner.url).await?);
        }
        if let Some(listener) = slot.as_mut() {
            if !listener.wait(timeout_ms).await {
                // The connection is gone (server restart): listen again on the next call,
                // and let the caller claim now in case a notification was lost meanwhile.
                *slot = None;
            }
        }
        Ok(())
    }

    async fn record_approval(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError> {
        self.record_queue_approval(approval).await
    }

    async fn approvals(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError> {
        self.queue_approvals(all).await
    }

    async fn approval(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError> {
        self.queue_approval(id).await
    }

    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        self.decide_queue_approval(id, decision).await
    }

    async fn decided_approvals(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError> {
        self.decided_queue_approvals(holder).await
    }

    async fn record_approval_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        self.record_queue_approval_outcome(id, outcome).await
    }
}

/// The `seq` an append's statement returned; no row: the task is not in the queue.
fn stored_seq(rows: &[tokio_postgres::Row], id: &TaskId) -> Result<u64, ForgeError> {
    let seq: i64 = rows
        .first()
        .map(|r| r.get(0))
        .ok_or_else(|| refusal::no_task_for_event(id))?;
    Ok(u64::try_from(seq).unwrap_or(0))
}
