//! What runs in the child between `fork` and `exec`: its own process group, the lifeline
//! watchdog, and the parent-death signal.
//!
//! Everything here runs in a freshly forked copy of a multi-threaded process, where only
//! async-signal-safe calls are allowed: raw syscalls through `libc`, no allocation, no locks.
#![expect(
    unsafe_code,
    reason = "pre_exec and the watchdog need raw, async-signal-safe libc calls"
)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::fcntl::OFlag;

/// The fd the watchdog keeps its end of the lifeline on.
const WATCHDOG_FD: RawFd = 3;

/// Highest fd the fallback close loop visits when `close_range` is unavailable.
const MAX_FD_FALLBACK: RawFd = 65_536;

/// The two ends of a run's lifeline pipe, both close-on-exec: the CLI itself never holds
/// either end after `exec`; the watchdog keeps only the read end.
pub(crate) fn lifeline_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)?;
    Ok((above_stdio(read)?, write))
}

/// `fd`, moved to 3 or above when it landed on 0–2 (forge started with stdio closed): the
/// child's stdio set-up would overwrite it there before the watchdog is forked.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    let moved = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: `moved` is a fresh fd returned by F_DUPFD_CLOEXEC; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// What the child needs to know, captured by value before the fork.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChildSetup {
    /// The watchdog's end of the lifeline.
    pub lifeline_read: RawFd,
    /// forge's pid: if the child's parent is no longer this after arming the death signal,
    /// forge died in between and the child must not run.
    pub forge_pid: libc::pid_t,
}

impl ChildSetup {
    pub(crate) fn new(lifeline_read: RawFd) -> Self {
        Self {
            lifeline_read,
            forge_pid: libc::pid_t::try_from(std::process::id()).unwrap_or(0),
        }
    }

    /// Runs in the child after `fork`, before `exec` (`Command::pre_exec`).
    pub(crate) fn run_in_child(&self) -> io::Result<()> {
        // Before the watchdog is forked: it sets its own dispositions on top of these.
        crate::child_signals::reset_in_child()?;
        // SAFETY: plain syscalls on our own process; no memory is touched.
        if unsafe { libc::setpgid(0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        let pgid = unsafe { libc::getpid() };

        // SAFETY: fork in a single-threaded child; the new process only runs `watchdog`,
        // which makes async-signal-safe calls and never returns.
        match unsafe { libc::fork() } {
            -1 => return Err(io::Error::last_os_error()),
            0 => watchdog(self.lifeline_read, pgid),
            _ => {}
        }

        arm_parent_death_signal()?;
        // SAFETY: plain syscall.
        if unsafe { libc::getppid() } != self.forge_pid {
            // forge died before the death signal was armed. The watchdog sees the lifeline
            // close and kills the group; do not exec.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn arm_parent_death_signal() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only. Fires when the spawning *thread* exits.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn arm_parent_death_signal() -> io::Result<()> {
    // No such signal here; the lifeline watchdog alone covers forge's death.
    Ok(())
}

/// The watchdog process: holds nothing but the lifeline's read end, ignores the polite
/// signals of the kill ladder, and SIGKILLs the group once the lifeline reads end-of-file.
fn watchdog(lifeline_read: RawFd, pgid: libc::pid_t) -> ! {
    // SAFETY: every call below is an async-signal-safe syscall on our own fds / process.
    unsafe {
        // Keep the lifeline on a known fd, then close everything else: stdio (the CLI's
        // stdout/stderr pipes, or their EOF would never come), std's exec-status pipe (or
        // spawn() would block), and other runs' lifelines (or they would never fire).
        let keep = if lifeline_read == WATCHDOG_FD
            || libc::dup2(lifeline_read, WATCHDOG_FD) == WATCHDOG_FD
        {
            WATCHDOG_FD
        } else {
            lifeline_read
        };
        close_all_except(keep);

        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Inherited from forge's runtime; its handler writes to fds we just closed.
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        name_self();

        let mut byte = 0u8;
        loop {
            let n = libc::read(keep, (&raw mut byte).cast::<libc::c_void>(), 1);
            let interrupted =
                n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
            if n > 0 || interrupted {
                continue;
            }
            break;
        }
        libc::kill(-pgid, libc::SIGKILL);
        libc::_exit(0)
    }
}

/// Closes every fd except `keep`.
///
/// # Safety
/// Only in the forked watchdog, which owns its fd table alone.
unsafe fn close_all_except(keep: RawFd) {
    // SAFETY: closing fds of our own process; see the function's contract.
    unsafe {
        if keep > 0 {
            close_range(0, keep - 1);
        }
        close_range(keep + 1, RawFd::MAX);
    }
}

/// # Safety
/// As [`close_all_except`].
#[cfg(target_os = "linux")]
unsafe fn close_range(first: RawFd, last: RawFd) {
    #[expect(clippy::cast_sign_loss, reason = "fds here are non-negative")]
    let (lo, hi) = (first as libc::c_uint, last as libc::c_uint);
    // SAFETY: the close_range syscall (Linux 5.9+) with no flags.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, lo, hi, 0 as libc::c_uint) };
    if rc != 0 {
        // SAFETY: as above, one fd at a time (older kernels).
        unsafe { close_loop(first, last) };
    }
}

/// # Safety
/// As [`close_all_except`].
#[cfg(not(target_os = "linux"))]
unsafe fn close_range(first: RawFd, last: RawFd) {
    // SAFETY: see the function's contract.
    unsafe { close_loop(first, last) };
}

/// # Safety
/// As [`close_all_except`].
unsafe fn close_loop(first: RawFd, last: RawFd) {
    let mut fd = first;
    while fd <= last.min(MAX_FD_FALLBACK) {
        // SAFETY: closing a possibly-unused fd of our own process; EBADF is fine.
        unsafe { libc::close(fd) };
        fd += 1;
    }
}

/// `forge-lifeline` in `ps`, so a leftover watchdog explains itself.
fn name_self() {
    #[cfg(target_os = "linux")]
    {
        const NAME: &[u8] = b"forge-lifeline\0";
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
        unsafe { libc::prctl(libc::PR_SET_NAME, NAME.as_ptr(), 0, 0, 0) };
    }
}
