//! What the three provider adapters (claude, codex, gemini) share, so each keeps only its
//! own specifics (auth checks, hint texts, environment variables).
//!
//! - [`probe`]: `detect`'s common start (locate the binary, fill a `Detection`) and the
//!   `--version` probe through the `ProcessRunner` port;
//! - [`version`]: reading `x.y.z` out of a CLI's output and checking a semver range;
//! - [`json_string`]: a JSON string literal decoded into one buffer of its size;
//! - [`provider`]: the checked provider id and the `Provider` methods every adapter writes
//!   the same way.

pub mod json_string;
pub mod probe;
pub mod provider;
pub mod version;

pub use probe::{VersionProbe, probe_invocation, probe_version, record_version, start_detection};
pub use version::{parse_leading_version, parse_version, release_in_range, version_in_range};
