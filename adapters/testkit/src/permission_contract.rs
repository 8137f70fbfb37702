//! The contract every [`PermissionRequests`] implementation keeps (the SQLite and the
//! PostgreSQL adapter): a request reads back as stored, from another process too; the
//! first decision stands and a second gets it back; an overdue request is denied by
//! timeout (also when a person answers late); a run's cancel closes its requests; a wait
//! sees a decision made in another process; and a store opened again (a restarted serve or
//! worker) still has what was pending — answered or expired, never forgotten.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed step should fail the test"
)]

use std::future::Future;
use std::sync::Arc;

use forge_domain::permission::{
    DecidedBy, PermissionDecided, PermissionDecision, PermissionId, PermissionOwner,
    PermissionRequest, ToolRequest, Verdict,
};
use forge_domain::{ForgeError, ProviderId, RunId, TaskId, ToolKind};
use forge_ports::PermissionRequests;

/// An hour: long enough that nothing expires while a check runs.
const LONG: u64 = 3_600_000;

/// A shell request `id` of `owner`.
pub fn request(id: &str, owner: PermissionOwner, command: &str) -> PermissionRequest {
    PermissionRequest {
        id: PermissionId::new(id).unwrap(),
        provider: ProviderId::new("claude").unwrap(),
        owner,
        tool: ToolRequest {
            tool: "Bash".to_owned(),
            kind: ToolKind::Shell,
            command: Some(command.to_owned()),
            path: None,
            diff: None,
            url: None,
            input: serde_json::json!({"command": command}),
        },
        requested_at_ms: 0,
        expires_at_ms: 0,
        decision: None,
    }
}

pub fn run(id: &str) -> PermissionOwner {
    PermissionOwner::Run(RunId::new(id).unwrap())
}

pub fn task(id: &str) -> PermissionOwner {
    PermissionOwner::Task(TaskId::new(id).unwrap())
}

fn person(verdict: Verdict, message: Option<&str>, name: &str) -> PermissionDecision {
    PermissionDecision::person(verdict, message.map(str::to_owned), name).unwrap()
}

fn ids(requests: &[PermissionRequest]) -> Vec<&str> {
    requests.iter().map(|r| r.id.as_str()).collect()
}

/// Runs every check on `a` (an empty store); `b` is a second handle on it (another
/// process, another machine); `reopen` opens a third after `a` and `b` are dropped.
pub async fn check<F, Fut>(
    a: Arc<dyn PermissionRequests>,
    b: Arc<dyn PermissionRequests>,
    reopen: F,
) where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Arc<dyn PermissionRequests>>,
{
    stored_and_listed(&*a, &*b).await;
    first_decision_stands(&*a, &*b).await;
    overdue_requests_are_denied_by_timeout(&*a, &*b).await;
    a_cancel_closes_the_owners_requests(&*a, &*b).await;
    a_wait_sees_another_process_decide(Arc::clone(&a), &*b).await;
    // A restart: what is pending survives, and is then answered or expires.
    let kept = request("perm-kept", task("q-9"), "make");
    a.ask_permission(&kept, LONG).await.unwrap();
    drop((a, b));
    let c = reopen().await;
    let pending = c.pending_permissions(None).await.unwrap();
    assert_eq!(ids(&pending), ["perm-1b", "perm-kept"], "{pending:?}");
    let decided = c
        .decide_permission(&kept.id, &person(Verdict::Allow, None, "ana"))
        .await
        .unwrap();
    assert!(
        matches!(decided, Some(PermissionDecided::Now(_))),
        "{decided:?}"
    );
}

async fn stored_and_listed(a: &dyn PermissionRequests, b: &dyn PermissionRequests) {
    let first = request("perm-1", run("r-1"), "cargo test");
    let stored = a.ask_permission(&first, LONG).await.unwrap();
    assert!(stored.requested_at_ms > 0, "{stored:?}");
    assert_eq!(stored.expires_at_ms, stored.requested_at_ms + LONG);
    assert_eq!(stored.tool, first.tool);
    assert!(stored.is_pending());
    // Read from the other process, as stored.
    assert_eq!(b.permission(&first.id).await.unwrap(), Some(stored.clone()));
    let unknown = PermissionId::new("perm-none").unwrap();
    assert_eq!(b.permission(&unknown).await.unwrap(), None);
    // An id is used once; a decided request is not stored as new.
    let again = b.ask_permission(&first, LONG).await;
    assert!(
        matches!(again, Err(ForgeError::InvalidRequest { .. })),
        "{again:?}"
    );
    let mut decided = request("perm-x", run("r-1"), "ls");
    decided.decision = Some(PermissionDecision::timeout());
    let refused = b.ask_permission(&decided, LONG).await;
    assert!(
        matches!(refused, Err(ForgeError::InvalidRequest { .. })),
        "{refused:?}"
    );
    // Pending ones, oldest first; by owner.
    a.ask_permission(&request("perm-1b", task("q-1"), "ls"), LONG)
        .await
        .unwrap();
    let all = b.pending_permissions(None).await.unwrap();
    assert_eq!(ids(&all), ["perm-1", "perm-1b"]);
    let of_task = b.pending_permissions(Some(&task("q-1"))).await.unwrap();
    assert_eq!(ids(&of_task), ["perm-1b"]);
    assert_eq!(of_task[0].owner, task("q-1"));
    let none = b.pending_permissions(Some(&run("q-1"))).await.unwrap();
    assert!(
        none.is_empty(),
        "a run and a task of one id are two owners: {none:?}"
    );
}

async fn first_decision_stands(a: &dyn PermissionRequests, b: &dyn PermissionRequests) {
    let id = PermissionId::new("perm-1").unwrap();
    let deny = person(Verdict::Deny, Some("use nextest"), "ana");
    let Some(PermissionDecided::Now(now)) = a.decide_permission(&id, &deny).await.unwrap() else {
        panic!("the first decision must stand");
    };
    let stored = now.decision.clone().unwrap();
    assert_eq!(stored.decision, Verdict::Deny);
    assert_eq!(stored.message.as_deref(), Some("use nextest"));
    assert_eq!(stored.by, DecidedBy::Person { name: "ana".into() });
    assert!(stored.decided_at_ms >= now.requested_at_ms);
    // A second, from the other machine, gets the first back.
    let second = b
        .decide_permission(&id, &person(Verdict::Allow, None, "bo"))
        .await
        .unwrap()
        .unwrap();
    let refusal = second.refusal().expect("a second decision is refused");
    assert_eq!(refusal.first, stored);
    assert!(refusal.to_string().contains("deny by ana"), "{refusal}");
    assert_eq!(
        b.permission(&id).await.unwrap().unwrap().decision,
        Some(stored)
    );
    // Decided ones are no longer pending; an unknown id is `None`.
    assert_eq!(
        ids(&a.pending_permissions(None).await.unwrap()),
        ["perm-1b"]
    );
    let unknown = PermissionId::new("perm-none").unwrap();
    assert_eq!(a.decide_permission(&unknown, &deny).await.unwrap(), None);
}

async fn overdue_requests_are_denied_by_timeout(
    a: &dyn PermissionRequests,
    b: &dyn PermissionRequests,
) {
    // Timeout 0: overdue as soon as stored.
    a.ask_permission(&request("perm-2", run("r-2"), "rm -rf /"), 0)
        .await
        .unwrap();
    a.ask_permission(&request("perm-3", run("r-2"), "rm -rf /"), 0)
        .await
        .unwrap();
    let expired = b.expire_permissions().await.unwrap();
    assert_eq!(ids(&expired), ["perm-2", "perm-3"]);
    for r in &expired {
        let d = r.decision.as_ref().unwrap();
        assert_eq!(d.by, DecidedBy::Timeout);
        assert_eq!(d.decision, Verdict::Deny);
        assert!(d.interrupt());
    }
    // Once: a second sweep finds nothing; the long-lived ones are left alone.
    assert!(a.expire_permissions().await.unwrap().is_empty());
    assert_eq!(
        ids(&a.pending_permissions(None).await.unwrap()),
        ["perm-1b"]
    );
    // A person answering late loses to the timeout, even before any sweep.
    a.ask_permission(&request("perm-4", run("r-2"), "ls"), 0)
        .await
        .unwrap();
    let late = b
        .decide_permission(
            &PermissionId::new("perm-4").unwrap(),
            &person(Verdict::Allow, None, "ana"),
        )
        .await
        .unwrap()
        .unwrap();
    let refusal = late.refusal().expect("the timeout came first");
    assert_eq!(refusal.first.by, DecidedBy::Timeout);
}

async fn a_cancel_closes_the_owners_requests(
    a: &dyn PermissionRequests,
    b: &dyn PermissionRequests,
) {
    for id in ["perm-5", "perm-6"] {
        a.ask_permission(&request(id, run("r-3"), "ls"), LONG)
            .await
            .unwrap();
    }
    a.ask_permission(&request("perm-7", run("r-4"), "ls"), LONG)
        .await
        .unwrap();
    let closed = b
        .close_permissions(&run("r-3"), &PermissionDecision::cancelled())
        .await
        .unwrap();
    assert_eq!(ids(&closed), ["perm-5", "perm-6"]);
    assert!(
        closed
            .iter()
            .all(|r| r.decision.as_ref().unwrap().by == DecidedBy::Cancelled)
    );
    assert_eq!(
        ids(&a.pending_permissions(None).await.unwrap()),
        ["perm-1b", "perm-7"]
    );
}

async fn a_wait_sees_another_process_decide(
    a: Arc<dyn PermissionRequests>,
    b: &dyn PermissionRequests,
) {
    let id = PermissionId::new("perm-7").unwrap();
    // A wait of 0 returns at once, still pending.
    let now = a.wait_for_permission(&id, 0).await.unwrap().unwrap();
    assert!(now.is_pending());
    let unknown = PermissionId::new("perm-none").unwrap();
    assert_eq!(a.wait_for_permission(&unknown, 0).await.unwrap(), None);
    // A waiter started first sees the other process's decision (it would return pending
    // only after the hour).
    let waiter = {
        let (a, id) = (Arc::clone(&a), id.clone());
        tokio::spawn(async move { a.wait_for_permission(&id, LONG).await })
    };
    tokio::task::yield_now().await;
    b.decide_permission(&id, &person(Verdict::AllowSession, None, "ana"))
        .await
        .unwrap();
    let seen = waiter.await.unwrap().unwrap().unwrap();
    assert_eq!(seen.decision.unwrap().decision, Verdict::AllowSession);
    // A waiter on an overdue request carries the expiry out itself.
    a.ask_permission(&request("perm-8", run("r-5"), "ls"), 0)
        .await
        .unwrap();
    let id = PermissionId::new("perm-8").unwrap();
    let expired = a.wait_for_permission(&id, LONG).await.unwrap().unwrap();
    assert_eq!(expired.decision.unwrap().by, DecidedBy::Timeout);
}
