//! Webhook authenticity: GitHub's HMAC signature and GitLab's shared token, compared in
//! constant time (a timing difference would let an attacker find the secret byte by byte).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Whether `header` (`X-Hub-Signature-256`, `sha256=<64 hex digits>`) is the HMAC SHA-256 of
/// `body` under `secret`. A missing or malformed header, or an empty secret, is `false`:
/// a worker without a secret accepts no webhook.
pub fn verify_github(secret: &[u8], header: Option<&str>, body: &[u8]) -> bool {
    let Some(hex) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Some(given) = decode_hex(hex) else {
        return false;
    };
    if secret.is_empty() {
        return false;
    }
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return false;
    };
    mac.update(body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&given).is_ok()
}

/// The `X-Hub-Signature-256` value GitHub would send for `body` (for tests and fakes that
/// play GitHub).
pub fn github_signature(secret: &[u8], body: &[u8]) -> String {
    let digest = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mut mac) => {
            mac.update(body);
            mac.finalize().into_bytes().to_vec()
        }
        // HMAC takes a key of any length; this arm is unreachable in practice.
        Err(_) => Vec::new(),
    };
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// Whether `header` (`X-Gitlab-Token`) is `secret`, compared in constant time. An empty
/// secret accepts nothing.
pub fn verify_gitlab(secret: &[u8], header: Option<&str>) -> bool {
    match header {
        Some(given) if !secret.is_empty() => given.as_bytes().ct_eq(secret).into(),
        _ => false,
    }
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    hex.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"It's a Secret to Everybody";
    const BODY: &[u8] = b"Hello, World!";
    /// GitHub's own example ("Validating webhook deliveries").
    const GITHUB_EXAMPLE: &str =
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    #[test]
    fn githubs_documented_example_and_look_alikes() {
        assert_eq!(github_signature(SECRET, BODY), GITHUB_EXAMPLE);
        let check = |secret: &[u8], header: Option<&str>, body: &[u8], want: bool| {
            assert_eq!(verify_github(secret, header, body), want, "{header:?}");
        };
        check(SECRET, Some(GITHUB_EXAMPLE), BODY, true);
        check(
            SECRET,
            Some(&GITHUB_EXAMPLE.to_uppercase().replace("SHA256=", "sha256=")),
            BODY,
            true,
        );
        // Look-alikes that must be refused.
        check(SECRET, Some(GITHUB_EXAMPLE), b"Hello, World?", false);
        check(b"another secret", Some(GITHUB_EXAMPLE), BODY, false);
        check(b"", Some(GITHUB_EXAMPLE), BODY, false);
        check(SECRET, None, BODY, false);
        check(SECRET, Some(""), BODY, false);
        check(
            SECRET,
            Some(&GITHUB_EXAMPLE.replace("sha256=", "sha1=")),
            BODY,
            false,
        );
        check(
            SECRET,
            Some(&GITHUB_EXAMPLE.replace("sha256=", "")),
            BODY,
            false,
        );
        check(
            SECRET,
            Some(&GITHUB_EXAMPLE[..GITHUB_EXAMPLE.len() - 2]),
            BODY,
            false,
        );
        check(SECRET, Some(&format!("{GITHUB_EXAMPLE}00")), BODY, false);
        check(SECRET, Some(&GITHUB_EXAMPLE.replace('7', "g")), BODY, false);
    }

    #[test]
    fn gitlab_tokens() {
        for (secret, header, want) in [
            (&b"s3cret-token"[..], Some("s3cret-token"), true),
            (b"s3cret-token", Some("s3cret-token "), false),
            (b"s3cret-token", Some("s3cret-toke"), false),
            (b"s3cret-token", Some("S3CRET-TOKEN"), false),
            (b"s3cret-token", Some(""), false),
            (b"s3cret-token", None, false),
            (b"", Some(""), false),
        ] {
            assert_eq!(verify_gitlab(secret, header), want, "{header:?}");
        }
    }
}
