//! The `web` group's board flow, in real Chromium against `serve --queue` with a token
//! (PostgreSQL, one worker process running the real CLI — claude, codex or gemini — the fake model playing
//! `delivery_env`: a change writing `.env`, so the gate holds it):
//!
//! - a task submitted from the page's form appears on the board and its card moves live
//!   (SSE) queued → running → held for approval;
//! - its page shows the stages, the agent's events, the validation cycles, the findings
//!   and the risk;
//! - approved there (with push), the card moves to delivered; a second browser's approval
//!   is told who decided first;
//! - a share link opens the task in a browser without the token, and nothing once revoked;
//! - `serve` restarted (same address, queue and roots): a reload shows the same cards in
//!   the same columns and the same task page (stages, changed files, events);
//! - screenshots of the board, the task page and the approval (and both again after the
//!   restart) are written to `target/e2e/work/web/web_board/` (claude; codex and gemini in
//!   their own subfolder).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use super::queue_serve::start_front_of;
use super::web::{Driver, browser, ensure_browser, screenshot, set_value, start_driver};
use super::{Suite, say};

const TOKEN: &str = "board-e2e-token";
const LIMIT: Duration = Duration::from_secs(240);

pub fn board_page(suite: &Suite, root: &Path, provider: &str) -> anyhow::Result<()> {
    ensure_browser()?;
    let mut front = start_front_of(
        suite,
        root,
        "web_board",
        provider,
        Some("delivery_env"),
        Some(TOKEN),
    )?;
    // claude's pictures are the ones README and docs/board.md show.
    let shots = match provider {
        "claude" => suite.work.join("web_board"),
        other => suite.work.join("web_board").join(other),
    };
    std::fs::create_dir_all(&shots)?;
    let driver = start_driver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        let mut outcome = flow(&client, &driver, &front.base, &front.repo, provider, &shots).await;
        if let Ok(seen) = &outcome {
            outcome = match front.restart_serve(suite) {
                Ok(()) => after_restart(&client, &front.base, seen, &shots)
                    .await
                    .map(|()| seen.clone()),
                Err(e) => Err(e),
            };
        }
        if outcome.is_err() {
            let _ = screenshot(&client, &shots.join("failure.png")).await;
        }
        let _ = client.close().await;
        outcome.map(|_| ())
    })
}

/// What the board and the task page showed before `serve` restarted.
#[derive(Debug, Clone)]
struct Seen {
    id: String,
    cards: Value,
    stages: Value,
    files: Value,
}

const CARDS: &str = "return [...document.querySelectorAll('.card')].map(c => c.dataset.task + ' ' + c.dataset.column).sort();";
const STAGES: &str = "return [...document.querySelectorAll('#t-stages tr')].map(r => r.cells[0] && r.cells[0].textContent);";
const FILES: &str =
    "return [...document.querySelectorAll('#t-diff details summary')].map(s => s.textContent);";

/// After `serve` restarted: a reload shows the same board (every card in its column) and
/// the same task page (stages, changed files, events).
async fn after_restart(
    client: &Client,
    base: &str,
    seen: &Seen,
    shots: &Path,
) -> anyhow::Result<()> {
    client.goto(&format!("{base}/#board")).await?;
    client.refresh().await?;
    until(
        client,
        "the board live after the restart",
        "return document.getElementById('board-live').textContent.includes('live');",
    )
    .await?;
    let card = format!("document.querySelector('.card[data-task=\"{}\"]')", seen.id);
    until(
        client,
        "the delivered card after the restart",
        &format!("const c = {card}; return c && c.dataset.column === 'delivered';"),
    )
    .await?;
    let cards = js(client, CARDS).await?;
    ensure!(
        cards == seen.cards,
        "the board after the restart: {cards} (before: {})",
        seen.cards
    );
    screenshot(client, &shots.join("board_after_restart.png")).await?;
    client.goto(&format!("{base}/task/{}", seen.id)).await?;
    until(
        client,
        "the changed files after the restart",
        "return document.querySelectorAll('#t-diff details').length > 0;",
    )
    .await?;
    until(
        client,
        "the agent events after the restart",
        "return document.getElementById('t-events').textContent.includes('tool ');",
    )
    .await?;
    let (stages, files) = (js(client, STAGES).await?, js(client, FILES).await?);
    ensure!(
        stages == seen.stages && files == seen.files,
        "the task page after the restart: stages {stages}, files {files} (before: {}, {})",
        seen.stages,
        seen.files
    );
    screenshot(client, &shots.join("task_after_restart.png")).await?;
    say("web     board: the same board and task page after serve restarted");
    Ok(())
}

async fn js(client: &Client, script: &str) -> anyhow::Result<Value> {
    Ok(client.execute(script, vec![]).await?)
}

/// Waits until `script` returns something truthy; returns it.
async fn until(client: &Client, what: &str, script: &str) -> anyhow::Result<Value> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let value = js(client, script).await?;
        if !(value.is_null() || value == json!(false) || value == json!("")) {
            return Ok(value);
        }
        ensure!(
            Instant::now() < deadline,
            "{what}: not seen in {} s",
            LIMIT.as_secs()
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

async fn with_token(client: &Client, base: &str, token: Option<&str>) -> anyhow::Result<()> {
    client.goto(base).await?;
    client
        .execute(
            "localStorage.clear(); if (arguments[0]) localStorage.setItem('forge.token', arguments[0]);",
            vec![json!(token)],
        )
        .await?;
    // The page reads the token when it loads.
    client.refresh().await?;
    Ok(())
}

async fn flow(
    client: &Client,
    driver: &Driver,
    base: &str,
    repo: &str,
    provider: &str,
    shots: &Path,
) -> anyhow::Result<Seen> {
    with_token(client, base, Some(TOKEN)).await?;
    // `serve --queue` opens on the board: `/` with no hash.
    client.goto(&format!("{base}/")).await?;
    client.refresh().await?;
    until(
        client,
        "the board live",
        "return document.getElementById('board-live').textContent.includes('live');",
    )
    .await?;
    let view = super::web::shown_view(client).await?;
    ensure!(
        view == "board",
        "`/` of serve --queue shows the {view}, not the board"
    );

    // Submit from the page's form.
    client.find(Locator::Id("new-task")).await?.click().await?;
    until(
        client,
        "the providers",
        "return document.querySelectorAll('#s-provider option').length > 0;",
    )
    .await?;
    set_value(client, "s-repo", repo).await?;
    set_value(client, "s-provider", provider).await?;
    set_value(
        client,
        "s-prompt",
        "Write the answer to answer.txt and configure the uploader.",
    )
    .await?;
    client
        .execute("document.getElementById('s-push').checked = true;", vec![])
        .await?;
    client.find(Locator::Id("s-send")).await?.click().await?;
    let submitted = until(client, "the submission", "const t = document.getElementById('s-error').textContent; return t.startsWith('submitted ') ? t.slice(10) : (t ? 'ERR ' + t : '');").await?;
    let id = submitted.as_str().unwrap_or_default().to_owned();
    ensure!(!id.starts_with("ERR"), "submit: {id}");

    // The card moves through the columns as the worker runs it.
    let card = format!("document.querySelector('.card[data-task=\"{id}\"]')");
    until(
        client,
        "the card held for approval",
        &format!("const c = {card}; return c && c.dataset.column === 'held';"),
    )
    .await?;
    let history = js(
        client,
        &format!(
            "return board.history.filter(h => h.startsWith('{id} ')).map(h => h.split(' ')[1]);"
        ),
    )
    .await?;
    let seen: Vec<&str> = history
        .as_array()
        .map(|h| h.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut moves = seen.clone();
    moves.dedup();
    ensure!(
        moves.contains(&"running") && moves.last() == Some(&"held"),
        "the card's columns: {seen:?}"
    );
    say(&format!(
        "web     board: the card moved {}",
        moves.join(" → ")
    ));
    screenshot(client, &shots.join("board.png")).await?;

    // Its page: stages, the agent's events, validation, findings, risk.
    client.goto(&format!("{base}/task/{id}")).await?;
    for (what, script) in [
        (
            "stages",
            "return document.querySelectorAll('#t-stages tr').length > 2;",
        ),
        (
            "agent events",
            "return document.getElementById('t-events').textContent.includes('tool ');",
        ),
        (
            "a validation cycle",
            "return document.getElementById('t-cycles').textContent.includes('cycle 1');",
        ),
        (
            "a finding",
            "return document.querySelectorAll('#t-findings tr').length > 1;",
        ),
        (
            "the risk",
            "return document.getElementById('t-risk').textContent.includes('score');",
        ),
        (
            "the changed files",
            "return document.querySelectorAll('#t-diff details').length > 0;",
        ),
        (
            "the approval box",
            "return !!document.getElementById('a-approve');",
        ),
    ] {
        until(client, what, script).await?;
    }
    screenshot(client, &shots.join("task.png")).await?;

    // A second browser opens the same page before the first decides.
    let other = browser(driver).await?;
    with_token(&other, base, Some(TOKEN)).await?;
    other.goto(&format!("{base}/task/{id}")).await?;
    until(
        &other,
        "the approval box (second browser)",
        "return !!document.getElementById('a-approve');",
    )
    .await?;

    set_value(client, "a-by", "alice").await?;
    client
        .execute("document.getElementById('a-push').checked = true;", vec![])
        .await?;
    client.find(Locator::Id("a-approve")).await?.click().await?;
    until(
        client,
        "approved",
        "return document.getElementById('a-answer').textContent.startsWith('Approved');",
    )
    .await?;
    screenshot(client, &shots.join("approval.png")).await?;
    set_value(&other, "a-by", "bob").await?;
    other.find(Locator::Id("a-approve")).await?.click().await?;
    let told = until(
        &other,
        "told who decided",
        "return document.getElementById('a-answer').textContent;",
    )
    .await?;
    let told = told.as_str().unwrap_or_default().to_owned();
    screenshot(&other, &shots.join("second_decision.png")).await?;
    let _ = other.close().await;
    ensure!(
        told.starts_with("Already approved by alice"),
        "the second decision: {told:?}"
    );

    // The worker carries it out: the card is delivered.
    client.goto(&format!("{base}/#board")).await?;
    until(
        client,
        "the card delivered",
        &format!("const c = {card}; return c && c.dataset.column === 'delivered';"),
    )
    .await?;

    // A share link: read without the token, refused once revoked.
    client.goto(&format!("{base}/task/{id}")).await?;
    until(
        client,
        "the share button",
        "return !!document.getElementById('share-make');",
    )
    .await?;
    client
        .find(Locator::Id("share-make"))
        .await?
        .click()
        .await?;
    let link = until(
        client,
        "the share link",
        "const a = document.getElementById('share-url'); return a && a.href;",
    )
    .await?;
    let link = link.as_str().context("share link")?.to_owned();
    let stranger = browser(driver).await?;
    with_token(&stranger, base, None).await?;
    stranger.goto(&link).await?;
    let shared = until(
        &stranger,
        "the shared task",
        "const t = document.getElementById('task'); return t && t.dataset.task;",
    )
    .await?;
    ensure!(shared == json!(id), "the share link opened {shared}");
    // Without the token, the board says no.
    let board = reqwest::get(format!("{base}/v1/board")).await?;
    ensure!(
        board.status() == 401,
        "the board without a token: {}",
        board.status()
    );
    client
        .find(Locator::Css(".share-revoke"))
        .await?
        .click()
        .await?;
    until(
        client,
        "revoked",
        "return document.getElementById('share-links').textContent.includes('revoked');",
    )
    .await?;
    stranger.goto(&link).await?;
    until(
        &stranger,
        "the revoked link refused",
        "return document.querySelector('#task .error') !== null;",
    )
    .await?;
    let _ = stranger.close().await;
    say(&format!(
        "web     board: screenshots in {}",
        shots.display()
    ));

    // What a restart must keep: the board's cards and the task page.
    client.goto(&format!("{base}/#board")).await?;
    until(
        client,
        "the card delivered (before the restart)",
        &format!("const c = {card}; return c && c.dataset.column === 'delivered';"),
    )
    .await?;
    let cards = js(client, CARDS).await?;
    client.goto(&format!("{base}/task/{id}")).await?;
    until(
        client,
        "the changed files (before the restart)",
        "return document.querySelectorAll('#t-diff details').length > 0;",
    )
    .await?;
    Ok(Seen {
        id,
        cards,
        stages: js(client, STAGES).await?,
        files: js(client, FILES).await?,
    })
}
