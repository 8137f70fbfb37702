//! Signal state a child starts with: default dispositions and an empty mask, whatever forge
//! inherited.
//!
//! Ignored dispositions and the signal mask survive `exec`. A forge started by a shell as a
//! background job (`nohup … &`, many CI runners) has SIGINT ignored, and a parent may block
//! SIGINT/SIGTERM; handed on, the CLI would ignore the ladder's polite rungs and only SIGKILL
//! could end it. This is what `posix_spawn` with `POSIX_SPAWN_SETSIGDEF` and
//! `POSIX_SPAWN_SETSIGMASK` does, done in `pre_exec` because forge forks the lifeline
//! watchdog there too.
#![expect(
    unsafe_code,
    reason = "runs between fork and exec: raw, async-signal-safe libc calls only"
)]

use std::io;

/// The signals whose disposition is reset: the ladder's, the terminal's, and those a CLI
/// relies on for its own children (SIGCHLD ignored would make the kernel reap them).
const RESET_TO_DEFAULT: [libc::c_int; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGPIPE,
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
];

/// Resets the dispositions first, then empties the mask, so a signal pending while blocked
/// is delivered with its default action rather than an inherited "ignore".
///
/// Only in the forked child before `exec` (async-signal-safe calls, no allocation).
pub(crate) fn reset_in_child() -> io::Result<()> {
    // SAFETY: sigaction/sigprocmask on our own, single-threaded, freshly forked process;
    // the structs are zeroed locals.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&raw mut default.sa_mask);
        for signal in RESET_TO_DEFAULT {
            if libc::sigaction(signal, &raw const default, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut empty);
        if libc::sigprocmask(libc::SIG_SETMASK, &raw const empty, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
