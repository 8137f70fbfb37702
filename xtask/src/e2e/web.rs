//! The `web` group: the page of `forge-code-agent serve` in a real headless Chromium
//! (Debian's `chromium` + `chromium-driver`, installed when missing), driven through
//! WebDriver with fantoccini, against the real claude and the fake model's slow scenario:
//! send a message and see text stream in before the run ends, cancel a slow run, reload
//! mid-run and see the stream resume. Screenshots go to `target/e2e/work/web/`. And the
//! page of `serve --queue` (the `queue_serve` setup: PostgreSQL, a worker process, claude):
//! a submitted task is listed, and a click streams its stages and its agent's events to the
//! task's end. And the board (`web_board.rs`, with each of claude, codex and gemini): submit
//! from the page, the card moving live, the task page, an approval decided once across
//! browsers, a share link, and the same board and page after `serve` restarts. And the
//! board at volume (`web_volume.rs`): fourteen tasks submitted from the page to `serve
//! --queue sqlite://…`, two workers running the fake CLI, every card in its final column.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::api::{SLOW_SCENARIO, Serve, workspaces};
use super::queue_serve::{post_task, start_front};
use super::summary::Verdict;
use super::{Ctx, ServerProcess, Suite, say};

const PROVIDER: &str = "claude";

/// chromedriver on a free port; killed when dropped.
pub struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `chromium` and `chromedriver` on PATH, installed with apt-get (through sudo when not
/// root) when missing.
pub fn ensure_browser() -> anyhow::Result<()> {
    ensure_apt(
        &["chromium", "chromedriver"],
        &["chromium", "chromium-driver"],
    )
}

/// `bins` on PATH, else `packages` installed with apt-get (through sudo when not root).
pub fn ensure_apt(bins: &[&str], packages: &[&str]) -> anyhow::Result<()> {
    let have = |bin: &str| which_in_path(bin);
    if bins.iter().all(|b| have(b)) {
        return Ok(());
    }
    say(&format!("installing {} with apt-get", packages.join(" ")));
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    let apt = |args: &[&str]| -> anyhow::Result<()> {
        let mut command = if root {
            Command::new("apt-get")
        } else {
            let mut c = Command::new("sudo");
            c.args(["-n", "apt-get"]);
            c
        };
        let status = command
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .context("apt-get")?;
        ensure!(status.success(), "apt-get {} failed", args.join(" "));
        Ok(())
    };
    apt(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq"];
    install.extend_from_slice(packages);
    apt(&install)?;
    ensure!(
        bins.iter().all(|b| have(b)),
        "{} still missing after apt-get install",
        bins.join(" or ")
    );
    Ok(())
}

fn which_in_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(bin).is_file()))
}

pub fn start_driver() -> anyhow::Result<Driver> {
    let port = free_port()?;
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting chromedriver")?;
    let driver = Driver { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        ensure!(Instant::now() < deadline, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(driver)
}

pub async fn browser(driver: &Driver) -> anyhow::Result<Client> {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]}),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    Ok(ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await?)
}

/// The flows: the chat page and the queue page with claude (when `-p` names it), the
/// board with every CLI `-p` names.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    if !ctx.providers.contains(&PROVIDER) {
        let mut verdicts = board_pages(ctx);
        verdicts.push(board_volume(ctx));
        return Ok(verdicts);
    }
    let started = Instant::now();
    let outcome = flows_in_browser(&ctx.suite);
    let page = Verdict {
        seconds: started.elapsed().as_secs_f64(),
        ..Verdict::of("page", PROVIDER, outcome)
    };
    let started = Instant::now();
    let outcome = queue_page(&ctx.suite, &ctx.root);
    let queue = Verdict {
        seconds: started.elapsed().as_secs_f64(),
        ..Verdict::of("queue_page", PROVIDER, outcome)
    };
    let mut verdicts = vec![page, queue];
    verdicts.extend(board_pages(ctx));
    verdicts.push(board_volume(ctx));
    Ok(verdicts)
}

/// The board at volume: two workers running the fake CLI in claude's place (whatever `-p`
/// says).
fn board_volume(ctx: &Ctx) -> Verdict {
    let started = Instant::now();
    let outcome = super::web_volume::volume(&ctx.suite, &ctx.root);
    Verdict {
        seconds: started.elapsed().as_secs_f64(),
        ..Verdict::of("board_volume", "claude", outcome)
    }
}

/// The board's flow with each CLI of `-p` (a worker running it for real).
fn board_pages(ctx: &Ctx) -> Vec<Verdict> {
    ["claude", "codex", "gemini"]
        .into_iter()
        .filter(|p| ctx.providers.contains(p))
        .map(|provider| {
            let started = Instant::now();
            let outcome = super::web_board::board_page(&ctx.suite, &ctx.root, provider);
            Verdict {
                seconds: started.elapsed().as_secs_f64(),
                ..Verdict::of("board_page", provider, outcome)
            }
        })
        .collect()
}

/// `serve --queue`'s page: the task submitted through the API is listed; clicked, its
/// events stream in to the task's end — stages and the agent's own events.
fn queue_page(suite: &Suite, root: &Path) -> anyhow::Result<()> {
    ensure_browser()?;
    let front = start_front(suite, root, "web_queue", PROVIDER)?;
    let created = post_task(
        &front.base,
        &json!({"repo": front.repo, "prompt": "Write the answer to answer.txt.",
                "options": {"provider": PROVIDER}}),
    )?;
    let id = created["task_id"]
        .as_str()
        .context("no task_id")?
        .to_owned();
    let driver = start_driver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        let outcome = follow_task(&client, &front.base, &id).await;
        if outcome.is_err() {
            let _ = screenshot(&client, &suite.work.join("web_queue_failure.png")).await;
        }
        let _ = client.close().await;
        outcome
    })
}

async fn follow_task(client: &Client, base: &str, id: &str) -> anyhow::Result<()> {
    // A server with a queue opens on the board; the chat, with the queue's list, is a tab
    // away.
    client.goto(base).await?;
    let view = shown_view(client).await?;
    ensure!(
        view == "board",
        "`/` of serve --queue shows the {view}, not the board"
    );
    client
        .goto(&format!("{}/#chat", base.trim_end_matches('/')))
        .await?;
    let view = shown_view(client).await?;
    ensure!(view == "chat", "`/#chat` shows the {view}, not the chat");
    let item = format!("#tasks li[title='{id}']");
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.find(Locator::Css(&item)).await.is_err() {
        ensure!(Instant::now() < deadline, "task {id} not listed");
        client
            .find(Locator::Id("queue-refresh"))
            .await?
            .click()
            .await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The item itself, not a pointer click at its middle, where its cancel button may be.
    client
        .execute(
            "document.querySelector(arguments[0]).click();",
            vec![json!(item)],
        )
        .await?;
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let text = client
            .execute(
                "return document.getElementById('task-events').textContent;",
                vec![],
            )
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if text.contains("task succeeded") {
            for seen in [
                "claimed",
                "stage agent",
                "agent tool_call_started",
                "agent completed",
            ] {
                ensure!(
                    text.contains(seen),
                    "{seen:?} in the task's events:\n{text}"
                );
            }
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "the task did not end on the page:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn flows_in_browser(suite: &Suite) -> anyhow::Result<()> {
    ensure_browser()?;
    let dir = suite.work.join("web");
    std::fs::create_dir_all(&dir)?;
    let artifacts = suite.work.clone();
    let scenario = dir.join("slow_stream.toml");
    std::fs::write(&scenario, SLOW_SCENARIO)?;
    let model = ServerProcess::start(
        &suite.forge,
        &scenario.display().to_string(),
        &dir.join("requests.jsonl"),
    )?;
    let (workspaces, env) = workspaces(suite, &dir, &model.base_url, &[PROVIDER])?;
    let workspace = workspaces
        .first()
        .map(|(_, w)| w.clone())
        .context("workspace")?;
    let serve = Serve::start(suite, &dir, &env)?;
    let driver = start_driver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        let outcome = flows(&client, &serve, &workspace, &artifacts).await;
        if outcome.is_err() {
            let _ = screenshot(&client, &artifacts.join("failure.png")).await;
        }
        let _ = client.close().await;
        outcome
    })
}

async fn flows(
    client: &Client,
    serve: &Serve,
    workspace: &Path,
    artifacts: &Path,
) -> anyhow::Result<()> {
    client.goto(&serve.url("/")).await?;
    // A server without a queue opens on the chat.
    let view = shown_view(client).await?;
    ensure!(
        view == "chat",
        "`/` of serve shows the {view}, not the chat"
    );
    set_value(client, "project", &workspace.display().to_string()).await?;
    set_value(client, "provider", PROVIDER).await?;

    // 1. Send: text appears while the run is still going, then the footer fills in.
    let started = Instant::now();
    send(client, "Tell me a slow story.").await?;
    let first_text = wait_until(client, Duration::from_secs(60), "streamed text", |s| {
        !s.answer.is_empty() && s.status == "running"
    })
    .await?;
    let first_ms = started.elapsed().as_millis();
    screenshot(client, &artifacts.join("streaming.png")).await?;
    let done = wait_until(client, Duration::from_secs(90), "the result", |s| {
        s.status == "success"
    })
    .await?;
    ensure!(
        done.answer.len() > first_text.answer.len(),
        "no more text after the first: {done:?}"
    );
    ensure!(
        done.answer.contains("The end."),
        "final text: {:?}",
        done.answer
    );
    ensure!(
        done.cost != "-" && done.duration != "-",
        "footer not filled: {done:?}"
    );
    say(&format!(
        "web     send: first text {first_ms} ms after Send ({} chars while running, {} at the end)",
        first_text.answer.len(),
        done.answer.len()
    ));
    screenshot(client, &artifacts.join("done.png")).await?;

    // 2. Cancel a slow run.
    send(client, "Tell me another slow story.").await?;
    wait_until(client, Duration::from_secs(60), "streamed text", |s| {
        !s.answer.is_empty() && s.status == "running"
    })
    .await?;
    client.find(Locator::Id("cancel")).await?.click().await?;
    let cancelled = wait_until(
        client,
        Duration::from_secs(30),
        "the cancelled result",
        |s| s.status.contains("cancelled"),
    )
    .await?;
    ensure!(
        !cancelled.answer.contains("The end."),
        "the run was not cut short: {cancelled:?}"
    );
    say(&format!(
        "web     cancel: {:?} with {} chars",
        cancelled.status,
        cancelled.answer.len()
    ));
    screenshot(client, &artifacts.join("cancelled.png")).await?;

    // 3. Reload mid-run: the transcript comes back and the stream goes on to the end.
    send(client, "One more slow story.").await?;
    let before = wait_until(client, Duration::from_secs(60), "streamed text", |s| {
        s.answer.len() > 20 && s.status == "running"
    })
    .await?;
    client.refresh().await?;
    let resumed = wait_until(client, Duration::from_secs(90), "the resumed result", |s| {
        s.status == "success"
    })
    .await?;
    ensure!(
        resumed.answer.starts_with(&before.answer[..20]),
        "the transcript was lost: {before:?} → {resumed:?}"
    );
    ensure!(
        resumed.answer.contains("The end."),
        "the stream did not resume: {resumed:?}"
    );
    let once = resumed.answer.matches("Once upon a time").count();
    ensure!(
        once == 1,
        "text repeated after the resume ({once} times): {:?}",
        resumed.answer
    );
    say(&format!(
        "web     reload: resumed after {} chars, ended with {}",
        before.answer.len(),
        resumed.answer.len()
    ));
    screenshot(client, &artifacts.join("resumed.png")).await?;

    // The run list shows the runs.
    let runs = client.find_all(Locator::Css("#runs li")).await?;
    ensure!(runs.len() >= 3, "run list has {} entries", runs.len());
    Ok(())
}

/// The view the page shows: `chat`, `board` or `task` (`none` while none is).
pub(super) async fn shown_view(client: &Client) -> anyhow::Result<String> {
    let value = client
        .execute(
            "if (!document.getElementById('board-view').hidden) return 'board';\
             if (!document.getElementById('task-view').hidden) return 'task';\
             return document.querySelector('main').style.display === 'none' ? 'none' : 'chat';",
            vec![],
        )
        .await?;
    Ok(value.as_str().unwrap_or("none").to_owned())
}

#[derive(Debug, Clone)]
struct Page {
    status: String,
    answer: String,
    cost: String,
    duration: String,
}

async fn page(client: &Client) -> anyhow::Result<Page> {
    let value = client
        .execute(
            "const turns = document.querySelectorAll('#transcript .turn');\
             const last = turns[turns.length - 1];\
             const answer = last ? [...last.querySelectorAll('.answer')].map(a => a.textContent).join('') : '';\
             return [document.getElementById('status').textContent, answer,\
                     document.getElementById('cost').textContent, document.getElementById('duration').textContent];",
            vec![],
        )
        .await?;
    let field = |i: usize| {
        value
            .get(i)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    };
    Ok(Page {
        status: field(0),
        answer: field(1),
        cost: field(2),
        duration: field(3),
    })
}

async fn wait_until(
    client: &Client,
    timeout: Duration,
    what: &str,
    cond: impl Fn(&Page) -> bool,
) -> anyhow::Result<Page> {
    let deadline = Instant::now() + timeout;
    loop {
        let state = page(client).await?;
        if cond(&state) {
            return Ok(state);
        }
        if Instant::now() > deadline {
            bail!("waiting for {what}: page is {state:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(super) async fn set_value(client: &Client, id: &str, value: &str) -> anyhow::Result<()> {
    client
        .execute(
            "const e = document.getElementById(arguments[0]); e.value = arguments[1];\
             e.dispatchEvent(new Event('change'));",
            vec![json!(id), json!(value)],
        )
        .await?;
    Ok(())
}

async fn send(client: &Client, prompt: &str) -> anyhow::Result<()> {
    let input = client.find(Locator::Id("prompt")).await?;
    input.clear().await?;
    input.send_keys(prompt).await?;
    client.find(Locator::Id("send")).await?.click().await?;
    Ok(())
}

pub async fn screenshot(client: &Client, path: &Path) -> anyhow::Result<()> {
    let png = client.screenshot().await?;
    std::fs::write(path, png)?;
    Ok(())
}
