//! TLS to the queue's database, on rustls, with libpq's `sslmode` words:
//!
//! - absent, `disable`, `prefer`: no TLS (as before; a server that requires TLS refuses);
//! - `require`: TLS, the server's certificate not checked (libpq's meaning: encryption
//!   against a passive listener), unless `sslrootcert` names a CA file — then as
//!   `verify-full`, as libpq does;
//! - `verify-full`: TLS, the certificate chain checked against `sslrootcert` (a PEM file)
//!   or, without one, the Mozilla roots, and the host name checked against it;
//! - `verify-ca` is refused with the reason (forge checks the name or nothing of the
//!   identity; a half check is not offered).
//!
//! tokio-postgres knows `disable | prefer | require` only, so forge takes `sslmode` and
//! `sslrootcert` off the URL before handing it over.

use std::sync::Arc;

use forge_domain::ForgeError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// What the URL asked of the connection's encryption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TlsMode {
    /// No TLS.
    Off,
    /// TLS without checking the server's identity.
    Encrypt,
    /// TLS, chain and host name checked; `ca`: the roots file (else the Mozilla roots).
    VerifyFull { ca: Option<String> },
}

/// The URL without forge's TLS parameters, and the mode they asked for.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for an `sslmode` forge does not offer.
pub(crate) fn split_url(url: &str) -> Result<(String, TlsMode), ForgeError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), TlsMode::Off));
    };
    let (mut mode, mut ca, mut kept) = (None, None, Vec::new());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", value)) => mode = Some(value.to_owned()),
            Some(("sslrootcert", value)) => ca = Some(percent_decoded(value)),
            _ => kept.push(pair),
        }
    }
    let tls = match (mode.as_deref(), ca) {
        (None | Some("disable" | "prefer" | "allow"), _) => TlsMode::Off,
        (Some("require"), None) => TlsMode::Encrypt,
        (Some("require" | "verify-full"), ca) => TlsMode::VerifyFull { ca },
        (Some("verify-ca"), _) => {
            return Err(ForgeError::InvalidRequest {
                reason: "queue URL: sslmode=verify-ca is not offered: use sslmode=verify-full \
                         (the chain and the host name) with sslrootcert=<CA file>"
                    .to_owned(),
            });
        }
        (Some(other), _) => {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "queue URL: unknown sslmode {other:?} (expected disable, prefer, require or verify-full)"
                ),
            });
        }
    };
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, tls))
}

/// `%2F` and friends in a file path given as a query value.
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The rustls configuration of `mode` (`None`: no TLS).
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when the CA file cannot be read or holds no certificate.
pub(crate) fn client_config(mode: &TlsMode) -> Result<Option<rustls::ClientConfig>, ForgeError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ForgeError::InvalidRequest {
            reason: format!("TLS: {e}"),
        })?;
    let config = match mode {
        TlsMode::Off => return Ok(None),
        TlsMode::Encrypt => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
            .with_no_client_auth(),
        TlsMode::VerifyFull { ca } => {
            let mut roots = rustls::RootCertStore::empty();
            match ca {
                Some(path) => {
                    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                        .and_then(Iterator::collect)
                        .map_err(|e| ForgeError::InvalidRequest {
                            reason: format!("queue URL: sslrootcert {path}: {e}"),
                        })?;
                    let (added, _) = roots.add_parsable_certificates(certs);
                    if added == 0 {
                        return Err(ForgeError::InvalidRequest {
                            reason: format!("queue URL: sslrootcert {path} holds no certificate"),
                        });
                    }
                }
                None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(Some(config))
}

/// `sslmode=require`: the handshake's signatures are checked (the session is encrypted to
/// whoever holds the certificate's key), the certificate's identity is not.
#[derive(Debug)]
struct EncryptOnly(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: &str, expected: Result<(&str, TlsMode), &str>) {
        match (split_url(url), expected) {
            (Ok((got, mode)), Ok((want, want_mode))) => {
                assert_eq!((got.as_str(), mode), (want, want_mode), "{url}");
            }
            (Err(e), Err(says)) => assert!(e.to_string().contains(says), "{url}: {e}"),
            (got, want) => panic!("{url}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn sslmode_words_and_the_url_tokio_postgres_gets() {
        let db = "postgres://u@h:5432/db";
        check(db, Ok((db, TlsMode::Off)));
        check(&format!("{db}?sslmode=disable"), Ok((db, TlsMode::Off)));
        check(&format!("{db}?sslmode=prefer"), Ok((db, TlsMode::Off)));
        check(&format!("{db}?sslmode=require"), Ok((db, TlsMode::Encrypt)));
        check(
            &format!("{db}?sslmode=verify-full"),
            Ok((db, TlsMode::VerifyFull { ca: None })),
        );
        // A CA file makes require check the identity, as libpq does.
        check(
            &format!("{db}?sslmode=require&sslrootcert=%2Fetc%2Fca.pem"),
            Ok((
                db,
                TlsMode::VerifyFull {
                    ca: Some("/etc/ca.pem".into()),
                },
            )),
        );
        // Other parameters stay, in order.
        check(
            &format!(
                "{db}?connect_timeout=3&sslmode=verify-full&sslrootcert=/c.pem&application_name=x"
            ),
            Ok((
                "postgres://u@h:5432/db?connect_timeout=3&application_name=x",
                TlsMode::VerifyFull {
                    ca: Some("/c.pem".into()),
                },
            )),
        );
        // Look-alikes: a parameter named like one, a value in another parameter.
        check(
            &format!("{db}?options=sslmode%3Drequire"),
            Ok((&format!("{db}?options=sslmode%3Drequire"), TlsMode::Off)),
        );
        check(&format!("{db}?sslmode=verify-ca"), Err("verify-full"));
        check(&format!("{db}?sslmode=yes"), Err("unknown sslmode"));
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let mode = |p: &std::path::Path| TlsMode::VerifyFull {
            ca: Some(p.display().to_string()),
        };
        let err = client_config(&mode(&empty)).unwrap_err().to_string();
        assert!(err.contains("holds no certificate"), "{err}");
        let err = client_config(&mode(&dir.path().join("missing.pem")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.pem"), "{err}");
        assert!(client_config(&TlsMode::Off).unwrap().is_none());
        assert!(client_config(&TlsMode::Encrypt).unwrap().is_some());
    }
}
