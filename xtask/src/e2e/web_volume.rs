//! The `web` group's volume case: `serve --queue sqlite://…` with two workers (each its own
//! HOME, as two machines) running the fake agent CLI — an instant CLI replaying a recorded
//! claude transcript, after writing `answer.txt` as an agent would — and the board in
//! Chromium.
//!
//! Fourteen tasks are submitted from the page's form, on four repositories whose own
//! `forge.toml` decides how each ends: `ok` (validated, committed: delivered), `bad` (its
//! validation fails every cycle: failed), `held` (`risk_threshold = 0`: held for approval)
//! and `slow` (its validation sleeps: running, until it is cancelled from its task page).
//! Every card moves live to its final column, one held change approved from its page moves
//! on to delivered; the columns' counts are asserted, both workers took tasks, and a
//! reload shows the same board. The picture:
//! `target/e2e/work/web/web_volume/board_volume.png`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use super::queue::{REPO_FORGE_TOML, Worker, forge, git};
use super::web::{Driver, browser, ensure_browser, screenshot, set_value, start_driver};
use super::{Suite, say};

/// The repositories, how many tasks each gets, and the column each task ends in.
const REPOS: [(&str, usize, &str); 4] = [
    ("ok", 6, "delivered"),
    ("bad", 4, "failed"),
    ("held", 3, "held"),
    ("slow", 1, "failed"),
];
/// Everything, submission included, well under a minute on the shared machine.
const LIMIT: Duration = Duration::from_secs(90);

/// The repository's `forge.toml`: its validation passes on the untouched repository (the
/// baseline) and decides the task once `answer.txt` (42) is there.
fn forge_toml(name: &str) -> String {
    match name {
        "bad" => "[validation]\ntest = \"[ ! -e answer.txt ] || grep -qx 43 answer.txt\"\n".into(),
        "held" => format!("{REPO_FORGE_TOML}\n[delivery]\nrisk_threshold = 0\n"),
        "slow" => "[validation]\ntest = \"[ ! -e answer.txt ] || sleep 120\"\n".into(),
        _ => REPO_FORGE_TOML.into(),
    }
}

/// The fake agent CLI, built beside `forge-code-agent` (same profile).
fn fake_cli(suite: &Suite, root: &Path) -> anyhow::Result<PathBuf> {
    let release = suite.forge.to_string_lossy().contains("/release/");
    let mut args = vec![
        "build",
        "-q",
        "-p",
        "forge-testkit",
        "--bin",
        "fake-agent-cli",
    ];
    if release {
        args.push("--release");
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(&args)
        .current_dir(root)
        .status()
        .context("building fake-agent-cli")?;
    ensure!(
        status.success(),
        "building fake-agent-cli failed ({status})"
    );
    Ok(suite.forge.with_file_name("fake-agent-cli"))
}

/// A worker's user configuration: claude is the fake CLI, writing the change and replaying
/// a recorded session; it says it is the pinned version and has a key (no `auth status`).
fn worker_toml(fake: &Path, transcript: &Path) -> String {
    format!(
        "default_provider = \"claude\"\n\n[providers.claude]\nbinary = {:?}\n\
         env = {{ FAKE_REPLAY = {:?}, FAKE_WRITE = \"answer.txt=42\", FAKE_VERSION = \"2.1.330\", \
         ANTHROPIC_API_KEY = \"fake\" }}\n",
        fake.display().to_string(),
        transcript.display().to_string(),
    )
}

pub fn volume(suite: &Suite, root: &Path) -> anyhow::Result<()> {
    ensure_browser()?;
    let fake = fake_cli(suite, root)?;
    let transcript = root.join("adapters/testkit/fixtures/claude/2.1.330/hello.jsonl");
    let dir = suite.work.join("web_volume");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut urls = BTreeMap::new();
    for (name, _, _) in REPOS {
        let src = dir.join("src").join(name);
        std::fs::create_dir_all(&src)?;
        std::fs::write(src.join("README.md"), format!("# {name}\n"))?;
        std::fs::write(src.join("forge.toml"), forge_toml(name))?;
        git(&src, &["init", "-q", "-b", "main"])?;
        git(&src, &["add", "-A"])?;
        git(&src, &["commit", "-q", "-m", "initial"])?;
        let bare = dir.join(format!("{name}.git"));
        git(
            &dir,
            &[
                "clone",
                "-q",
                "--bare",
                &src.to_string_lossy(),
                &bare.to_string_lossy(),
            ],
        )?;
        urls.insert(name, format!("file://{}", bare.display()));
    }
    let queue = format!("sqlite://{}", dir.join("queue.db").display());

    // serve first: it makes the queue's database.
    let front = dir.join("front");
    std::fs::create_dir_all(&front)?;
    std::fs::write(front.join("forge-config.toml"), "")?;
    let mut serve = Worker(
        forge(suite, &front, &[])
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--queue",
                &queue,
                "--root",
            ])
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("serve.log"))?)
            .spawn()
            .context("starting serve --queue sqlite://…")?,
    );
    let base = super::server::listening_on(&mut serve.0)?;
    let mut workers = Vec::new();
    for name in ["a", "b"] {
        let home = dir.join(format!("machine-{name}"));
        std::fs::create_dir_all(&home)?;
        std::fs::write(
            home.join("forge-config.toml"),
            worker_toml(&fake, &transcript),
        )?;
        workers.push(Worker(
            forge(suite, &home, &[])
                .args(["worker", "--queue", &queue, "--name", name])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(
                    dir.join(format!("worker-{name}.log")),
                )?)
                .spawn()
                .context("starting a worker")?,
        ));
    }

    let driver = start_driver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        let outcome = flow(&client, &driver, &base, &urls, &dir).await;
        if outcome.is_err() {
            let _ = screenshot(&client, &dir.join("failure.png")).await;
        }
        let _ = client.close().await;
        outcome
    })?;
    drop(workers);
    drop(serve);
    Ok(())
}

async fn js(client: &Client, script: &str) -> anyhow::Result<Value> {
    Ok(client.execute(script, vec![]).await?)
}

/// Waits until `script` returns something truthy before `deadline`; returns it.
async fn until(
    client: &Client,
    deadline: Instant,
    what: &str,
    script: &str,
) -> anyhow::Result<Value> {
    loop {
        let value = js(client, script).await?;
        if !(value.is_null() || value == json!(false) || value == json!("")) {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            let board = js(client, CARDS).await.unwrap_or_default();
            bail!("{what}: not seen in time; the board: {board}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every card as `id column worker`.
const CARDS: &str = "return [...document.querySelectorAll('.card')].map(c => c.dataset.task + ' ' + c.dataset.column + ' ' + ((c.querySelector('.worker') || {}).textContent || '-')).sort();";
/// The columns' counts as the page shows them (its headings) and as cards in each.
const COUNTS: &str = "return Object.fromEntries([...document.querySelectorAll('.column')].map(c => [c.dataset.column, [c.querySelector('.count').textContent, c.querySelector('.cards').childElementCount]]));";

async fn flow(
    client: &Client,
    driver: &Driver,
    base: &str,
    urls: &BTreeMap<&str, String>,
    dir: &Path,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let deadline = started + LIMIT;
    client.goto(&format!("{base}/#board")).await?;
    until(
        client,
        deadline,
        "the board live",
        "return document.getElementById('board-live').textContent.includes('live');",
    )
    .await?;
    client.find(Locator::Id("new-task")).await?.click().await?;
    until(
        client,
        deadline,
        "the providers",
        "return document.querySelectorAll('#s-provider option').length > 0;",
    )
    .await?;
    // Submitted from the page's form, one repository after the other in turn.
    let mut expected: Vec<(String, &str, &str)> = Vec::new();
    let mut left: Vec<(&str, usize, &str)> = REPOS.to_vec();
    let mut n = 0;
    while left.iter().any(|(_, count, _)| *count > 0) {
        for (repo, count, column) in &mut left {
            if *count == 0 {
                continue;
            }
            *count -= 1;
            n += 1;
            set_value(client, "s-repo", &urls[repo]).await?;
            set_value(client, "s-provider", "claude").await?;
            set_value(
                client,
                "s-prompt",
                &format!("Volume task {n} on {repo}: write the answer"),
            )
            .await?;
            client
                .execute(
                    "document.getElementById('s-error').textContent = '';",
                    vec![],
                )
                .await?;
            client.find(Locator::Id("s-send")).await?.click().await?;
            let submitted = until(client, deadline, "the submission", "const t = document.getElementById('s-error').textContent; return t.startsWith('submitted ') ? t.slice(10) : (t ? 'ERR ' + t : '');").await?;
            let id = submitted.as_str().unwrap_or_default().to_owned();
            ensure!(!id.is_empty() && !id.starts_with("ERR"), "submit: {id}");
            expected.push((id, repo, column));
        }
    }
    let submitted_in = started.elapsed().as_secs_f64();

    // The slow one is cancelled from its page while its validation runs.
    let slow = expected
        .iter()
        .find(|(_, repo, _)| *repo == "slow")
        .map(|(id, _, _)| id.clone())
        .context("no slow task")?;
    let card = |id: &str| format!("document.querySelector('.card[data-task=\"{id}\"]')");
    until(
        client,
        deadline,
        "the slow task validating",
        &format!("const c = {}; return c && c.dataset.column === 'running' && c.textContent.includes('validation');", card(&slow)),
    )
    .await?;
    // In another window: the board stays open, following everything live.
    let other = browser(driver).await?;
    other.goto(&format!("{base}/task/{slow}")).await?;
    until(
        &other,
        deadline,
        "the cancel button",
        "return !!document.getElementById('t-cancel');",
    )
    .await?;
    other.find(Locator::Id("t-cancel")).await?.click().await?;
    until(
        &other,
        deadline,
        "the cancellation",
        // The answer, unless the page was drawn again with the task ended meanwhile.
        "const a = document.getElementById('t-cancel-answer'); return (a && a.textContent.startsWith('Cancelled')) || document.getElementById('task').dataset.column === 'failed';",
    )
    .await?;
    let _ = other.close().await;

    let all_final = expected
        .iter()
        .map(|(id, _, column)| {
            format!("({c} || {{}}).dataset?.column === '{column}'", c = card(id))
        })
        .collect::<Vec<_>>()
        .join(" && ");
    until(
        client,
        deadline,
        "every card in its final column",
        &format!("return {all_final};"),
    )
    .await?;

    // One held change approved from its page (the other window again): its worker
    // commits it, and the card moves on to delivered.
    let approved = expected
        .iter_mut()
        .find(|(_, repo, _)| *repo == "held")
        .context("no held task")?;
    let other = browser(driver).await?;
    other.goto(&format!("{base}/task/{}", approved.0)).await?;
    until(
        &other,
        deadline,
        "the approval box",
        "return !!document.getElementById('a-approve');",
    )
    .await?;
    set_value(&other, "a-by", "volume").await?;
    other.find(Locator::Id("a-approve")).await?.click().await?;
    until(
        &other,
        deadline,
        "approved",
        "return document.getElementById('a-answer').textContent.startsWith('Approved');",
    )
    .await?;
    let _ = other.close().await;
    approved.2 = "delivered";
    until(
        client,
        deadline,
        "the approved card delivered",
        &format!(
            "const c = {}; return c && c.dataset.column === 'delivered';",
            card(&approved.0)
        ),
    )
    .await?;
    let finished_in = started.elapsed().as_secs_f64();

    // The counts per column, as the headings say and as cards.
    let mut want: BTreeMap<&str, usize> = ["queued", "running", "held", "delivered", "failed"]
        .into_iter()
        .map(|c| (c, 0))
        .collect();
    for (_, _, column) in &expected {
        *want.entry(column).or_default() += 1;
    }
    let counts = js(client, COUNTS).await?;
    for (column, n) in &want {
        ensure!(
            counts[column] == json!([format!("({n})"), n]),
            "column {column}: {} (expected {n}); all: {counts}",
            counts[column]
        );
    }
    // The outcomes say why: the failed validations and the cancelled one.
    let outcomes = js(client, "return Object.fromEntries([...document.querySelectorAll('.card')].map(c => [c.dataset.task, (c.querySelector('.outcome') || {}).textContent]));").await?;
    ensure!(
        outcomes[&slow] == json!("cancelled"),
        "the slow task's outcome: {}",
        outcomes[&slow]
    );
    let cards = js(client, CARDS).await?;
    let workers: std::collections::BTreeSet<String> = cards
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|c| c.rsplit(' ').next().map(str::to_owned))
        .filter(|w| w != "-")
        .collect();
    ensure!(
        workers.len() == 2,
        "both workers ran tasks: {workers:?} ({cards})"
    );

    // The page followed it all live: every card seen moving (the cancelled one may have
    // been claimed before the page saw it queued).
    let history = js(client, "return board.history;").await?;
    let history: Vec<&str> = history
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (id, _, column) in &expected {
        let seen: Vec<&str> = history
            .iter()
            .filter_map(|h| {
                h.strip_prefix(id.as_str())
                    .and_then(|r| r.strip_prefix(' '))
            })
            .collect();
        ensure!(
            seen.contains(&"running") && seen.last() == Some(column),
            "card {id} seen live as {seen:?}, expected … running … {column}"
        );
    }

    // A reload shows the same board.
    client.refresh().await?;
    until(
        client,
        deadline,
        "the board after a reload",
        &format!(
            "return document.body.dataset.boardCards === '{}';",
            expected.len()
        ),
    )
    .await?;
    let again = js(client, CARDS).await?;
    ensure!(again == cards, "after a reload: {again} (before: {cards})");
    // After the reload: the charts read the final board too.
    screenshot(client, &dir.join("board_volume.png")).await?;
    say(&format!(
        "web     volume: {} tasks submitted from the page in {submitted_in:.1} s, all in their columns at {finished_in:.1} s ({})",
        expected.len(),
        want.iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(())
}
