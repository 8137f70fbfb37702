//! The permissions group's board case: a run started through `serve`'s API in `ask` waits
//! in the board's "Waiting for you" column (headless Chromium, as the web group drives it);
//! its Allow button answers it, the command runs, and the card shows the answer. A second
//! browser's Deny on the same request, clicked after, is told the first answer stands (or
//! its page shows the allow given elsewhere, when its refresh came first).

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use super::api::{Serve, post_run, subscribe};
use super::case_run::Suite;
use super::permissions::{ASK_ONCE, Agent, PROMPT, TIMEOUT, prepare};
use super::web::{browser, ensure_browser, screenshot, start_driver};

const WAITING: &str = ".column[data-column=\"waiting\"] .perm";

pub fn board(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    ensure_browser()?;
    let case = prepare(suite, agent, "perm_board", ASK_ONCE)?;
    let server = Serve::start(suite, &case.root, &case.env)?;
    let driver = start_driver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let first = browser(&driver).await?;
        let second = browser(&driver).await?;
        let outcome = flow(&case.workspace, &case.provider, &server, &first, &second).await;
        if outcome.is_err() {
            let _ = screenshot(&first, &case.root.join("failure.png")).await;
        }
        let _ = first.close().await;
        let _ = second.close().await;
        outcome
    })?;
    ensure!(
        case.made(),
        "allowed on the board, yet made.txt is not there"
    );
    Ok(())
}

async fn flow(
    workspace: &std::path::Path,
    provider: &str,
    server: &Serve,
    first: &Client,
    second: &Client,
) -> anyhow::Result<()> {
    for client in [first, second] {
        client.goto(&server.url("/#board")).await?;
    }
    let http = reqwest::Client::new();
    let body = json!({
        "provider": provider,
        "prompt": PROMPT,
        "workdir": workspace,
        "permission_mode": "ask",
        "timeout_ms": TIMEOUT.as_millis() as u64,
    });
    let run_id = post_run(&http, server, body).await?;
    let mut events = subscribe(&http, server, &run_id).await?;
    // Both pages show the request, live (no reload).
    for client in [first, second] {
        let card = client
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css(WAITING))
            .await
            .context("the request never reached the Waiting for you column")?;
        let text = card.text().await?;
        ensure!(
            text.contains("made.txt"),
            "the card does not name the command: {text}"
        );
    }
    first
        .find(Locator::Css(&format!("{WAITING} .perm-allow")))
        .await?
        .click()
        .await?;
    let answered = answer_text(first).await?;
    ensure!(
        answered.starts_with("Allowed"),
        "the first answer shows {answered:?}"
    );
    // The second page, after: its Deny refused with the allow that stands — or, when its
    // refresh came first, the allow shown as the answer given elsewhere.
    let deny = second
        .find(Locator::Css(&format!("{WAITING} .perm-deny")))
        .await?;
    if deny.is_enabled().await? {
        deny.click().await?;
        let send = second
            .find(Locator::Css(&format!("{WAITING} .perm-send")))
            .await?;
        if send.is_enabled().await? {
            send.click().await?;
        }
    }
    let told = answer_text(second).await?;
    ensure!(
        (told.contains("Already decided") || told.contains("Answered elsewhere —"))
            && told.contains("Allowed"),
        "the second page shows {told:?}"
    );
    // The run goes on to its end.
    while let Some(message) = events.next().await? {
        if message.event == "result" {
            let result: Value = serde_json::from_str(&message.data)?;
            ensure!(
                result["status"] == "success",
                "status {} ({})",
                result["status"],
                result["errors"]
            );
            return Ok(());
        }
    }
    bail!("the run's stream ended without a result")
}

/// The answer a page's request card shows, once it shows one.
async fn answer_text(client: &Client) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text: Value = client
            .execute(
                "const a = document.querySelector('.column[data-column=\"waiting\"] .perm .perm-answer'); return a ? a.textContent : '';",
                vec![],
            )
            .await?;
        let text = text.as_str().unwrap_or_default().to_owned();
        // "Answered elsewhere" alone: the stored answer is on its way.
        if !text.is_empty() && !text.starts_with("Could not") && text != "Answered elsewhere" {
            return Ok(text);
        }
        ensure!(
            Instant::now() < deadline,
            "no answer shown (last: {text:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
