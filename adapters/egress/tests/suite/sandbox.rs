//! The bridge inside a real bubblewrap sandbox with its own network namespace: the routes
//! and the proxy work, nothing else on the machine's loopback is reachable, the key is added
//! outside, and a cancel reaches the CLI.

use std::path::Path;
use std::process::Stdio;

use forge_adapter_egress::{Denied, DenyReason, Egress, EgressConfig, fresh_key};
use forge_domain::sandbox::{EgressRoute, KeySlot};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use super::support::{Upstream, bridge_exe, within};

/// `bwrap` as the sandbox runs it; with `ignore_signals`, started the way forge must start
/// it for a graceful cancel (bubblewrap itself dies of SIGINT, and `--die-with-parent` then
/// kills the sandbox before the CLI could answer the signal).
fn sandboxed(egress: &Egress, script: &str, ignore_signals: bool) -> Command {
    let mut command = if ignore_signals {
        let mut env = Command::new("env");
        env.args(["--ignore-signal=INT,TERM,HUP", "bwrap"]);
        env
    } else {
        Command::new("bwrap")
    };
    let dir = egress.socket_dir();
    command
        .args([
            "--unshare-net",
            "--unshare-pid",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
        ])
        .args(["--dev", "/dev", "--proc", "/proc", "--bind"])
        .arg(dir)
        .arg(dir)
        .args(egress.bridge_args(Path::new(bridge_exe())))
        .args(["sh", "-c", script])
        .envs(egress.inside_env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    command
}

fn model_route(model: &Upstream) -> (EgressRoute, String) {
    let credential = fresh_key(KeySlot::Header("x-api-key".into()), "sk-real-key");
    let placeholder = credential.placeholder.clone();
    (
        EgressRoute {
            addr: model.addr,
            upstream: None,
            keys: vec![credential],
        },
        placeholder,
    )
}

#[tokio::test]
async fn inside_the_sandbox_only_the_routes_and_allowed_hosts_are_reachable() {
    let model = Upstream::start().await;
    // A port on the machine's loopback that is not a route: what a steered agent would try.
    let other = Upstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (route, placeholder) = model_route(&model);
    let mut egress = Egress::start(EgressConfig {
        socket_dir: dir.path().join("egress"),
        routes: vec![route],
        allow_hosts: vec!["registry.npmjs.org".parse().unwrap()],
    })
    .unwrap();
    let mut denials = egress.denials().unwrap();
    let script = format!(
        r#"
        curl -sS -H "x-api-key: $API_KEY" http://{model}/v1/messages; echo " route=$?"
        curl -sS -x '' http://{other}/ 2>/dev/null; echo " other=$?"
        curl -sS http://169.254.169.254/latest/meta-data/ 2>/dev/null; echo " metadata=$?"
        curl -sS https://example.com/ 2>/dev/null; echo " connect=$?"
        echo "env=$API_KEY"
        exit 7
        "#,
        model = model.addr,
        other = other.addr,
    );
    let child = sandboxed(&egress, &script, false)
        .env("API_KEY", &placeholder)
        .spawn()
        .unwrap();
    let output = within("sandboxed run", child.wait_with_output())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "ok route=0",
            // Refused by the sandbox's own network: nothing listens there inside.
            " other=7",
            // Through the proxy: 403 (curl prints the body and exits 0 for a plain GET).
            "forge sandbox: connection to 169.254.169.254 refused: the cloud metadata address is never reachable",
            " metadata=0",
            // CONNECT refused with 403: curl's "CONNECT tunnel failed".
            " connect=56",
            &format!("env={placeholder}"),
        ],
        "{stdout}"
    );
    assert_eq!(
        output.status.code(),
        Some(7),
        "the CLI's exit code is the sandbox's"
    );
    let heads = model.heads();
    assert_eq!(heads.len(), 1);
    assert!(heads[0].contains("x-api-key: sk-real-key"), "{}", heads[0]);
    assert!(!heads[0].contains(&placeholder));
    assert!(other.heads().is_empty(), "nothing reached the other port");
    let mut seen = Vec::new();
    while let Ok(denied) = denials.try_recv() {
        seen.push(denied);
    }
    assert_eq!(
        seen,
        [
            Denied {
                target: "169.254.169.254".into(),
                reason: DenyReason::MetadataAddress
            },
            Denied {
                target: "example.com:443".into(),
                reason: DenyReason::NotAllowed
            },
        ]
    );
}

#[tokio::test]
async fn a_cancel_reaches_the_cli_inside_and_its_status_comes_out() {
    let dir = tempfile::tempdir().unwrap();
    let egress = Egress::start(EgressConfig {
        socket_dir: dir.path().join("egress"),
        routes: Vec::new(),
        allow_hosts: Vec::new(),
    })
    .unwrap();
    let script =
        "trap 'echo got-int; exit 3' INT; echo ready; while true; do sleep 1000 & wait $!; done";
    let mut child = sandboxed(&egress, script, true).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    within("ready", stdout.read_line(&mut line)).await.unwrap();
    assert_eq!(line, "ready\n");
    // What forge's kill ladder does: SIGINT to the sandbox's process group.
    let group = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGINT).unwrap();
    let mut rest = String::new();
    within("rest", stdout.read_to_string(&mut rest))
        .await
        .unwrap();
    let status = within("exit", child.wait()).await.unwrap();
    assert_eq!(rest, "got-int\n");
    assert_eq!(status.code(), Some(3));
    // Nothing of the run is left in its group once the kernel has torn the sandbox's PID
    // namespace down (the `sleep` died with it).
    within("group empty", async {
        while nix::sys::signal::killpg(group, None) != Err(nix::errno::Errno::ESRCH) {
            tokio::task::yield_now().await;
        }
    })
    .await;
}
