//! `sslmode` as libpq means it. tokio-postgres knows `disable`, `prefer` and
//! `require`, and hands the handshake to a TLS connector; libpq's `prefer`
//! and `require` encrypt without checking the server's certificate, and
//! `verify-ca` / `verify-full` check it against trusted roots. The URL is
//! rewritten for tokio-postgres and the connector chosen to match.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The URL tokio-postgres accepts, and the TLS connector for its sslmode.
pub(crate) fn prepare(url: &str) -> Result<(String, MakeRustlsConnect), String> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let mut verify = false;
    let mut params = vec![];
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", "verify-ca" | "verify-full")) => {
                verify = true;
                params.push("sslmode=require".to_string());
            }
            Some(("sslmode", "allow")) => params.push("sslmode=prefer".to_string()),
            Some(("sslmode", m)) if !["disable", "prefer", "require"].contains(&m) => {
                return Err(format!(
                    "sslmode={m} is not known; use disable, prefer, require, verify-ca or verify-full"
                ));
            }
            _ => params.push(pair.to_string()),
        }
    }
    let url = if params.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", params.join("&"))
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = if verify {
        let roots = rustls::RootCertStore {
            roots: webpki_roots_list(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
            .with_no_client_auth()
    };
    Ok((url, MakeRustlsConnect::new(config)))
}

fn webpki_roots_list() -> Vec<rustls::pki_types::TrustAnchor<'static>> {
    webpki_roots::TLS_SERVER_ROOTS.to_vec()
}

/// libpq's `require`: the channel is encrypted and the handshake's
/// signatures checked, but the certificate is not checked against a root
/// (a team server with its own certificate works, as with `psql`).
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

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
        verify_tls12_signature(
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
        verify_tls13_signature(
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
