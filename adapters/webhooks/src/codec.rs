//! The [`WebhookCodec`] port over this crate's signature checks and payload decoders, for
//! the webhook route (which names no adapter).

use forge_domain::forges::{ForgeEvent, ForgeKind};
use forge_ports::WebhookCodec;

/// GitHub's and GitLab's webhooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Webhooks;

impl WebhookCodec for Webhooks {
    fn verify(&self, kind: ForgeKind, secret: &[u8], signature: Option<&str>, body: &[u8]) -> bool {
        match kind {
            ForgeKind::Github => crate::verify_github(secret, signature, body),
            ForgeKind::Gitlab => crate::verify_gitlab(secret, signature),
        }
    }

    fn decode(&self, kind: ForgeKind, event: &str, body: &[u8]) -> Result<Vec<ForgeEvent>, String> {
        match kind {
            ForgeKind::Github => crate::github::decode(event, body).map(|e| vec![e]),
            ForgeKind::Gitlab => crate::gitlab::decode(event, body),
        }
        .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_checks_its_own_header() {
        let body = br#"{"zen": "hi"}"#;
        let sig = crate::github_signature(b"s3cret", body);
        let codec = Webhooks;
        for (kind, secret, header, want) in [
            (ForgeKind::Github, &b"s3cret"[..], Some(sig.as_str()), true),
            (ForgeKind::Github, b"other", Some(sig.as_str()), false),
            (ForgeKind::Github, b"s3cret", None, false),
            (ForgeKind::Gitlab, b"s3cret", Some("s3cret"), true),
            (ForgeKind::Gitlab, b"s3cret", Some(sig.as_str()), false),
            (ForgeKind::Gitlab, b"", Some(""), false),
        ] {
            assert_eq!(
                codec.verify(kind, secret, header, body),
                want,
                "{kind:?} {header:?}"
            );
        }
        assert_eq!(
            codec.decode(ForgeKind::Github, "ping", body),
            Ok(vec![ForgeEvent::Other {
                name: "ping".into()
            }])
        );
        assert!(codec.decode(ForgeKind::Github, "ping", b"{").is_err());
    }
}
