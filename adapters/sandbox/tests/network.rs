//! The network half around a REAL process (bubblewrap, the real process runner) with a fake
//! egress point: the process runs in a network namespace of its own behind the egress's
//! bridge and environment, its key is a placeholder while the plan carries the real one to
//! the model's route, the egress's refusals are the process's, and the egress point is
//! stopped once the process was waited for.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failing test"
)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_sandbox::{SandboxConfig, SandboxedRunner};
use forge_domain::ForgeError;
use forge_domain::sandbox::{
    Confinement, EgressPlan, KeySlot, RunNetwork, SandboxDenial, SandboxMode, SandboxSettings,
    model_wiring,
};
use forge_ports::{
    EgressSession, Invocation, NetworkConfinement, ProcessRunner, SandboxDenials, SpawnOptions,
    StdoutItem,
};

#[derive(Default)]
struct Seen {
    plans: Mutex<Vec<EgressPlan>>,
    stopped: AtomicBool,
}

struct FakeEgress {
    seen: Arc<Seen>,
    sockets: PathBuf,
}

impl NetworkConfinement for FakeEgress {
    fn start(&self, plan: &EgressPlan) -> Result<Box<dyn EgressSession>, ForgeError> {
        self.seen.plans.lock().unwrap().push(plan.clone());
        Ok(Box::new(FakeSession {
            seen: Arc::clone(&self.seen),
            sockets: self.sockets.clone(),
            denials: Some(vec![SandboxDenial::network("127.0.0.1:22", "loopback")]),
        }))
    }
}

struct FakeSession {
    seen: Arc<Seen>,
    sockets: PathBuf,
    denials: Option<Vec<SandboxDenial>>,
}

struct FakeDenials(Vec<SandboxDenial>);

#[async_trait]
impl SandboxDenials for FakeDenials {
    async fn next_denial(&mut self) -> Option<SandboxDenial> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }
}

#[async_trait]
impl EgressSession for FakeSession {
    fn bridge_args(&self) -> Vec<String> {
        // Stands for the bridge: runs the command with one more variable.
        vec!["env".to_owned(), "BRIDGED=yes".to_owned()]
    }
    fn inside_env(&self) -> Vec<(String, String)> {
        vec![("HTTP_PROXY".to_owned(), "http://127.0.0.1:3128".to_owned())]
    }
    fn socket_dir(&self) -> PathBuf {
        self.sockets.clone()
    }
    fn take_denials(&mut self) -> Option<Box<dyn SandboxDenials>> {
        let denials = self.denials.take()?;
        Some(Box::new(FakeDenials(denials)))
    }
    async fn shutdown(self: Box<Self>) {
        self.seen.stopped.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_confined_process_runs_behind_its_egress_point_which_ends_with_it() {
    let base = env!("CARGO_TARGET_TMPDIR");
    let tree = tempfile::tempdir_in(base).unwrap();
    let home = tempfile::tempdir_in(base).unwrap();
    let sockets = tempfile::tempdir_in(base).unwrap();
    let seen = Arc::new(Seen::default());
    let runner = SandboxedRunner::new(
        Arc::new(TokioProcessRunner::new()),
        SandboxConfig {
            settings: SandboxSettings {
                mode: SandboxMode::On,
                ..SandboxSettings::default()
            },
            home: Some(home.path().to_path_buf()),
            ..SandboxConfig::default()
        },
    )
    .with_network(Arc::new(FakeEgress {
        seen: Arc::clone(&seen),
        sockets: sockets.path().to_path_buf(),
    }));
    let mut confinement = Confinement::work_tree(tree.path());
    confinement.credentials = vec!["ANTHROPIC_API_KEY".to_owned()];
    confinement.network = RunNetwork {
        model: model_wiring("claude"),
        mcp: None,
    };
    let script = "echo \"$BRIDGED $HTTP_PROXY $ANTHROPIC_API_KEY\"; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo; \
                  touch \"$SOCKETS/written\" && echo sockets-bound";
    let mut invocation =
        Invocation::new("sh", vec!["-c".into(), script.into()], tree.path()).confined(confinement);
    let set = &mut invocation.env.set;
    set.insert("ANTHROPIC_API_KEY".into(), "sk-real".into());
    set.insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:4100".into());
    set.insert("SOCKETS".into(), sockets.path().display().to_string());

    let mut child = runner
        .spawn(invocation, SpawnOptions::default())
        .await
        .unwrap();
    let mut denials = child.take_sandbox_denials().unwrap();
    let mut lines = Vec::new();
    while let Some(item) = child.next_stdout().await.unwrap() {
        if let StdoutItem::Line { text, .. } = item {
            lines.push(text);
        }
    }
    assert!(
        !seen.stopped.load(Ordering::SeqCst),
        "stopped before the wait"
    );
    let exit = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.code, Some(0), "{}", exit.stderr_tail);
    assert!(
        seen.stopped.load(Ordering::SeqCst),
        "the egress point outlived the process"
    );

    let plan = seen.plans.lock().unwrap()[0].clone();
    assert_eq!(plan.routes.len(), 1);
    let route = &plan.routes[0];
    assert_eq!(route.addr.to_string(), "127.0.0.1:4100");
    assert_eq!(route.keys[0].slot, KeySlot::Header("x-api-key".into()));
    assert_eq!(route.keys[0].value, "sk-real");
    // The package registries, open by default.
    assert!(
        plan.allow_hosts
            .iter()
            .any(|h| h.matches("index.crates.io", 443)),
        "{:?}",
        plan.allow_hosts
    );
    let placeholder = &route.keys[0].placeholder;
    assert_eq!(
        lines,
        [
            format!("yes http://127.0.0.1:3128 {placeholder}"),
            // A network namespace of its own: loopback only.
            "lo ".to_owned(),
            "sockets-bound".to_owned(),
        ]
    );
    assert_eq!(
        denials.next_denial().await,
        Some(SandboxDenial::network("127.0.0.1:22", "loopback"))
    );
}
