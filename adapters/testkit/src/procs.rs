//! Whether a process is still running, for tests that check nothing outlived a run.

/// Alive = `/proc/<pid>` exists and is not a zombie (a zombie is dead, only unreaped).
pub fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state != Some("Z") && state != Some("X")
}
