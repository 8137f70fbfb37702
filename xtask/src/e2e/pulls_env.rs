//! The setting of a `pulls` case (and of the `gitlab` group's feedback case): as a team
//! would run forge on a GitHub (or GitLab) repository. A fresh PostgreSQL queue; the fake
//! model; the forge's contract fake (GitHub's held to `@octokit/openapi`) as
//! `[forges.NAME]` with its API URL, token and webhook secret; the repository
//! `https://github.com/octo-e2e/app.git` (`https://gitlab.e2e.test/e2e/app.git`), which git
//! on the worker's machine reaches as a local bare repository (`url.<bare>.insteadOf`, so
//! fetch and push go there while forge sees the forge's URL); one worker with its own HOME;
//! and `serve --queue` taking the webhooks. The worker and serve have the token; only serve
//! has the webhook secret.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_testkit::github::{GithubFake, OpenApi, ensure_installed};
use forge_testkit::gitlab::GitlabFake;
use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::case_run::Suite;
use super::queue::{QueueCase, Worker, final_status, forge, git_out, prepare_in};

pub(super) const OWNER_REPO: &str = "octo-e2e/app";
pub(super) const REPO_URL: &str = "https://github.com/octo-e2e/app.git";
pub(super) const TOKEN: &str = "ghp_e2ePullsToken0123456789abcdefABCDEF";
pub(super) const SECRET: &str = "e2e-webhook-s3cret";
pub(super) const GITLAB_HOST: &str = "gitlab.e2e.test";
pub(super) const GITLAB_PROJECT: &str = "e2e/app";
pub(super) const GITLAB_URL: &str = "https://gitlab.e2e.test/e2e/app.git";
pub(super) const GITLAB_TOKEN: &str = "glpat-e2eFeedback0123456789ab";
/// A collaborator with `write`: may steer forge.
pub(super) const WRITER: &str = "wendy-writer";
/// A collaborator with `read`: may not.
pub(super) const READER: &str = "rita-reader";
/// forge's own login (`FORGE_BOT_LOGIN`): the fake posts forge's comments as it.
const BOT: &str = "forge-bot";

/// The repository's `forge.toml`: its test wants 42 in answer.txt (when there is one).
const REPO_FORGE_TOML: &str =
    "[validation]\ntest = \"[ ! -e answer.txt ] || grep -qx 42 answer.txt\"\n";

/// GitHub's description, installed once per suite run.
fn contract() -> anyhow::Result<Arc<OpenApi>> {
    static CONTRACT: OnceLock<Result<Arc<OpenApi>, String>> = OnceLock::new();
    CONTRACT
        .get_or_init(|| {
            let path = ensure_installed()?;
            OpenApi::load(&path).map(Arc::new)
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("GitHub's OpenAPI description: {e}"))
}

/// Which forge a case runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Site {
    Github,
    Gitlab,
}

impl Site {
    fn repo_url(self) -> &'static str {
        match self {
            Site::Github => REPO_URL,
            Site::Gitlab => GITLAB_URL,
        }
    }

    /// `[forges.NAME]` naming the fake at `api_url`.
    fn forges(self, api_url: &str) -> String {
        let (name, host, token_env) = match self {
            Site::Github => ("github", "github.com", "GITHUB_TOKEN"),
            Site::Gitlab => ("gitlab", GITLAB_HOST, "GITLAB_TOKEN"),
        };
        let secret_env = format!("FORGE_{}_WEBHOOK_SECRET", name.to_ascii_uppercase());
        format!(
            "\n[forges.{name}]\nkind = \"{name}\"\nhost = \"{host}\"\napi_url = \"{api_url}\"\n\
             token_env = \"{token_env}\"\nwebhook_secret_env = \"{secret_env}\"\n"
        )
    }

    /// The token variable and its value, the webhook secret's variable.
    fn env(self) -> [(&'static str, &'static str); 2] {
        match self {
            Site::Github => [
                ("GITHUB_TOKEN", TOKEN),
                ("FORGE_GITHUB_WEBHOOK_SECRET", SECRET),
            ],
            Site::Gitlab => [
                ("GITLAB_TOKEN", GITLAB_TOKEN),
                ("FORGE_GITLAB_WEBHOOK_SECRET", SECRET),
            ],
        }
    }
}

/// The forge's contract fake.
pub(super) enum Fake {
    Github(GithubFake),
    Gitlab(GitlabFake),
}

/// A running case; everything stops when it is dropped (serve first, the fake forge's
/// runtime last).
pub(super) struct Hub {
    _serve: Worker,
    _worker: Option<Worker>,
    pub db: FreshDb,
    pub case: QueueCase,
    pub fake: Fake,
    runtime: tokio::runtime::Runtime,
    site: Site,
    /// serve's `http://127.0.0.1:PORT`.
    pub base: String,
    suite: Suite,
    /// The HOME `task submit` and `task status` run from.
    submitter: PathBuf,
}

impl Hub {
    /// The case `name` of `provider` with the fake model playing `scenario` (of
    /// `delivery_scenarios`); a worker only when `worker` (a case that runs no task has
    /// none, so nothing it queues is taken).
    pub(super) fn start(
        suite: &Suite,
        root: &Path,
        (name, provider, scenario): (&str, &str, &str),
        worker: bool,
    ) -> anyhow::Result<Self> {
        Self::start_on(
            Site::Github,
            suite,
            root,
            (name, provider, scenario),
            worker,
        )
    }

    /// As [`Hub::start`], on `site`; on GitLab the writer is a developer (30) and the
    /// reader a reporter (20) of the project.
    pub(super) fn start_on(
        site: Site,
        suite: &Suite,
        root: &Path,
        (name, provider, scenario): (&str, &str, &str),
        worker: bool,
    ) -> anyhow::Result<Self> {
        let dir = suite.work.join(name).join(provider);
        let case = prepare_in(suite, root, dir, provider, (scenario, REPO_FORGE_TOML))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let fake = match site {
            Site::Github => {
                let github = runtime.block_on(GithubFake::start(contract()?, TOKEN))?;
                let mut state = github.state();
                for (login, role) in [(WRITER, "write"), (READER, "read")] {
                    state
                        .permissions
                        .insert((OWNER_REPO.to_owned(), login.to_owned()), role.to_owned());
                }
                drop(state);
                Fake::Github(github)
            }
            Site::Gitlab => {
                let gitlab = runtime.block_on(GitlabFake::start(GITLAB_HOST, GITLAB_TOKEN))?;
                let mut state = gitlab.state();
                state.add_project(GITLAB_PROJECT);
                state.add_member(GITLAB_PROJECT, WRITER, 30);
                state.add_member(GITLAB_PROJECT, READER, 20);
                drop(state);
                Fake::Gitlab(gitlab)
            }
        };
        let api_url = match &fake {
            Fake::Github(f) => f.api_url(),
            Fake::Gitlab(f) => f.api_url(),
        };
        let forges = site.forges(&api_url);
        let db = FreshDb::create_blocking();
        let worker = if worker {
            Some(start_worker(suite, &case, &db.url, (site, &forges))?)
        } else {
            None
        };
        let (serve, base) = start_serve(suite, &case, &db.url, (site, &forges))?;
        let submitter = case.dir.join("submitter");
        std::fs::create_dir_all(&submitter)?;
        std::fs::write(submitter.join("forge-config.toml"), "")?;
        Ok(Self {
            _serve: serve,
            _worker: worker,
            db,
            case,
            fake,
            runtime,
            site,
            base,
            suite: suite.clone(),
            submitter,
        })
    }

    /// The fake GitHub.
    ///
    /// # Errors
    /// When the case runs on GitLab.
    pub(super) fn github(&self) -> anyhow::Result<&GithubFake> {
        match &self.fake {
            Fake::Github(f) => Ok(f),
            Fake::Gitlab(_) => bail!("a GitLab case has no GitHub"),
        }
    }

    /// The fake GitLab.
    ///
    /// # Errors
    /// When the case runs on GitHub.
    pub(super) fn gitlab(&self) -> anyhow::Result<&GitlabFake> {
        match &self.fake {
            Fake::Gitlab(f) => Ok(f),
            Fake::Github(_) => bail!("a GitHub case has no GitLab"),
        }
    }

    /// The bare repository behind the forge's URL.
    pub(super) fn bare(&self) -> PathBuf {
        self.case.dir.join("remote.git")
    }

    /// `task submit --pull-request --push` of `prompt` on the forge's URL: the task's id.
    pub(super) fn submit(&self, provider: &str, prompt: &str) -> anyhow::Result<String> {
        let out = forge(&self.suite, &self.submitter, &self.case.env)
            .args(["task", "submit", "--queue", &self.db.url, "--repo"])
            .arg(self.site.repo_url())
            .args(["--provider", provider, "--push", "--pull-request", "--json"])
            .arg(prompt)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "task submit: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(serde_json::from_slice::<Value>(&out.stdout)?["task_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// `task status --json` of `id` once it has ended.
    pub(super) fn finished(&self, id: &str) -> anyhow::Result<Value> {
        final_status(
            &self.suite,
            &self.submitter,
            &self.case.env,
            &self.db.url,
            id,
        )
    }

    /// `task list --queue --json`: every queued task.
    pub(super) fn tasks(&self) -> anyhow::Result<Vec<Value>> {
        let out = forge(&self.suite, &self.submitter, &self.case.env)
            .args(["task", "list", "--queue", &self.db.url, "--json"])
            .output()?;
        serde_json::from_slice(&out.stdout)
            .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// `approvals show ap-<id> --json` until its decision has been carried out.
    pub(super) fn carried_out(&self, id: &str) -> anyhow::Result<Value> {
        let ap = format!("ap-{id}");
        let started = Instant::now();
        loop {
            let out = forge(&self.suite, &self.submitter, &self.case.env)
                .args(["approvals", "show", &ap, "--json", "--queue", &self.db.url])
                .output()?;
            let shown: Value = serde_json::from_slice(&out.stdout)
                .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
            if shown["approval"]["outcome"].is_object() {
                return Ok(shown["approval"].clone());
            }
            if started.elapsed() > Duration::from_secs(180) {
                bail!("{ap} not carried out: {shown}");
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// POSTs `payload` to serve's `/v1/webhooks/github` as GitHub event `event`, delivery
    /// `delivery`, signed with `secret`: the status and the JSON answer.
    pub(super) fn hook(
        &self,
        event: &str,
        delivery: &str,
        payload: &Value,
        secret: &str,
    ) -> anyhow::Result<(u16, Value)> {
        let body = serde_json::to_vec(payload)?;
        let signature = forge_adapter_webhooks::github_signature(secret.as_bytes(), &body);
        let url = format!("{}/v1/webhooks/github", self.base);
        self.runtime.block_on(async {
            let response = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("x-github-event", event)
                .header("x-github-delivery", delivery)
                .header("x-hub-signature-256", signature)
                .body(body)
                .send()
                .await?;
            let status = response.status().as_u16();
            Ok((status, response.json().await.unwrap_or(Value::Null)))
        })
    }

    /// POSTs `payload` to serve's `/v1/webhooks/gitlab` as GitLab's `event` (`Note Hook`
    /// …), delivery `uuid`, with `X-Gitlab-Token: token`: the status and the JSON answer.
    pub(super) fn gitlab_hook(
        &self,
        event: &str,
        uuid: &str,
        payload: &Value,
        token: &str,
    ) -> anyhow::Result<(u16, Value)> {
        let body = serde_json::to_vec(payload)?;
        let url = format!("{}/v1/webhooks/gitlab", self.base);
        self.runtime.block_on(async {
            let response = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("x-gitlab-event", event)
                .header("x-gitlab-event-uuid", uuid)
                .header("x-gitlab-token", token)
                .body(body)
                .send()
                .await?;
            let status = response.status().as_u16();
            Ok((status, response.json().await.unwrap_or(Value::Null)))
        })
    }

    /// `GET <serve><path>`'s JSON.
    pub(super) fn api(&self, path: &str) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        self.runtime.block_on(async {
            Ok(reqwest::Client::new()
                .get(url)
                .send()
                .await?
                .json::<Value>()
                .await?)
        })
    }

    /// The fake model's request log.
    pub(super) fn model_requests(&self) -> anyhow::Result<Vec<Value>> {
        let text = std::fs::read_to_string(self.case.dir.join("requests.jsonl"))?;
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// The sha `forge/<id>` points at on the bare repository.
    pub(super) fn branch_head(&self, id: &str) -> anyhow::Result<String> {
        Ok(git_out(
            &self.bare(),
            &["rev-parse", &format!("refs/heads/forge/{id}")],
        )?
        .trim()
        .to_owned())
    }
}

/// The environment the worker and serve share: the CLI's, and the forge's token.
fn forge_env(case: &QueueCase, site: Site) -> Vec<(String, String)> {
    let mut env = case.env.clone();
    let [(token_env, token), _] = site.env();
    env.push((token_env.into(), token.into()));
    env.push(("FORGE_BOT_LOGIN".into(), BOT.into()));
    env
}

/// The worker `a` with its own HOME: the CLI's configuration and `[forges.github]`, and a
/// git configuration that sends the GitHub URL to the bare repository.
fn start_worker(
    suite: &Suite,
    case: &QueueCase,
    db: &str,
    (site, forges): (Site, &str),
) -> anyhow::Result<Worker> {
    let home = case.dir.join("machine-a");
    std::fs::create_dir_all(&home)?;
    let cli = fixed_cli_home(&case.dir, case.offline.project_toml(), &home)?;
    std::fs::write(home.join("forge-config.toml"), format!("{cli}{forges}"))?;
    let bare = case.dir.join("remote.git");
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"{}\"]\n\tinsteadOf = {}\n",
            bare.display(),
            site.repo_url()
        ),
    )?;
    let log = std::fs::File::create(case.dir.join("worker-a.log"))?;
    let child = forge(suite, &home, &forge_env(case, site))
        .args(["worker", "--queue", db, "--name", "a"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting a worker")?;
    Ok(Worker(child))
}

/// `serve --queue` with the webhook secret, its own HOME naming the forge; the process and
/// its base URL.
fn start_serve(
    suite: &Suite,
    case: &QueueCase,
    db: &str,
    (site, forges): (Site, &str),
) -> anyhow::Result<(Worker, String)> {
    let home = case.dir.join("front");
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("forge-config.toml"), forges)?;
    let log = std::fs::File::create(case.dir.join("serve.log"))?;
    let mut env = forge_env(case, site);
    let [_, (secret_env, secret)] = site.env();
    env.push((secret_env.into(), secret.into()));
    let mut serve = Worker(
        forge(suite, &home, &env)
            .args(["serve", "--addr", "127.0.0.1:0", "--queue", db])
            .arg("--root")
            .arg(&case.dir)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("starting serve --queue")?,
    );
    let base = super::server::listening_on(&mut serve.0)?;
    Ok((serve, base))
}

/// The provider's settings with the CLI's sessions kept in one home on this machine (as
/// claude's `~/.claude` on a real one): a run's private home (`isolate_home`) lives in its
/// bundle inside the work tree, which delivery removes, so a follow-up could not resume the
/// session there.
pub(super) fn fixed_cli_home(
    case_dir: &Path,
    project_toml: String,
    home: &Path,
) -> anyhow::Result<String> {
    let mut cli = project_toml;
    if !cli.lines().any(|l| l.starts_with("home = ")) {
        std::fs::create_dir_all(home.join("cli-home"))?;
        // codex reads its provider from `$CODEX_HOME`, which a run's private home copies
        // from the template; the fixed home holds it once.
        let template = case_dir.join("codex-template/config.toml");
        if template.is_file() {
            std::fs::create_dir_all(home.join("cli-home/.codex"))?;
            std::fs::copy(&template, home.join("cli-home/.codex/config.toml"))?;
        }
        let fixed = format!(
            "isolate_home = false\nhome = \"{}\"\n",
            home.join("cli-home").display()
        );
        cli = cli.replace("isolate_home = true\n", &fixed);
    }
    Ok(cli)
}
