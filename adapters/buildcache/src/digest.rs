//! SHA-256 digests in lower-case hex.

use std::path::Path;

use forge_domain::ForgeError;
use sha2::{Digest, Sha256};

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn text(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

pub(crate) fn bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// One digest over the names and contents of those of `names` present in `dir`.
pub(crate) fn files(dir: &Path, names: &[String]) -> Result<Option<String>, ForgeError> {
    let mut hasher = Sha256::new();
    let mut any = false;
    for name in names {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(contents) => {
                any = true;
                hasher.update(name.as_bytes());
                hasher.update([0]);
                hasher.update(
                    u64::try_from(contents.len())
                        .unwrap_or(u64::MAX)
                        .to_le_bytes(),
                );
                hasher.update(&contents);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ForgeError::io(path.display().to_string(), e.to_string())),
        }
    }
    Ok(any.then(|| hex(&hasher.finalize())))
}
