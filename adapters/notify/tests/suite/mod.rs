mod server;
mod telegram;
mod webhook;

use forge_domain::delivery::{ApprovalId, ApprovalNotice};
use forge_domain::task::TaskId;

pub(crate) fn notice() -> ApprovalNotice {
    let task = TaskId::new("t1").unwrap();
    ApprovalNotice::new(
        task.clone(),
        ApprovalId::for_task(&task),
        "Add login",
        (
            7,
            "high".into(),
            vec!["+4 secret: AKIAABCDEFGHIJKLMNOP in .env:1".into()],
        ),
        vec![".env".into()],
        "forge/t1",
    )
}
