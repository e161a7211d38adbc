//! TLS failures reaching an upstream, in words: a refused certificate says why ("it has
//! expired", "it is a CA certificate used as a server's") with rustls's own name after it.

use rustls::{CertificateError, Error as TlsError};

/// The words for a connection error whose cause is TLS, else None.
pub(crate) fn tls_failure(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(tls) = as_tls(current) {
            return Some(tls_words(tls));
        }
        cause = current.source();
    }
    None
}

/// A rustls error, itself or carried in `io::Error`s (hyper-rustls wraps tokio-rustls's
/// `io::Error` in another, and an `io::Error`'s `source` skips what it carries).
fn as_tls<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a TlsError> {
    let mut current = error;
    for _ in 0..8 {
        if let Some(tls) = current.downcast_ref::<TlsError>() {
            return Some(tls);
        }
        let carried = current.downcast_ref::<std::io::Error>()?.get_ref()?;
        current = carried;
    }
    None
}

fn tls_words(error: &TlsError) -> String {
    match error {
        TlsError::InvalidCertificate(cert) => {
            let (why, name, hint) = certificate_words(cert);
            format!("the upstream's certificate was refused: {why} ({name}){hint}")
        }
        TlsError::AlertReceived(alert) => {
            format!("the upstream refused the TLS handshake (it sent the alert {alert:?})")
        }
        other => format!("the TLS handshake with the upstream failed: {other}"),
    }
}

/// Why a certificate was refused, rustls's name for it, and what to do when there is a way.
fn certificate_words(cert: &CertificateError) -> (String, String, &'static str) {
    use CertificateError as C;
    const TRUST: &str =
        "; if the upstream's CA is one of your own, pass it with --upstream-ca FILE";
    let name = variant_name(&format!("{cert:?}"));
    let (why, hint): (String, &str) = match cert {
        C::UnknownIssuer => ("it was issued by a CA tracer does not trust".into(), TRUST),
        C::Expired | C::ExpiredContext { .. } => ("it has expired".into(), ""),
        C::NotValidYet | C::NotValidYetContext { .. } => ("it is not valid yet".into(), ""),
        C::NotValidForName => ("it is not for this host name".into(), ""),
        C::NotValidForNameContext {
            expected,
            presented,
        } => (
            format!(
                "it is not for this host name: it names {}, not {}",
                presented.join(", "),
                expected.to_str()
            ),
            "",
        ),
        C::Revoked => ("it has been revoked".into(), ""),
        C::BadSignature => ("its signature does not verify".into(), ""),
        C::BadEncoding => ("it could not be read".into(), ""),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            ("it is not for a TLS server".into(), "")
        }
        C::Other(other) => {
            let inner = variant_name(&format!("{:?}", other.0));
            let why = match inner.as_str() {
                "CaUsedAsEndEntity" => "it is a CA certificate used as a server's".into(),
                "EndEntityUsedAsCa" => "a server's certificate was used as a CA".into(),
                "UnknownIssuer" => "it was issued by a CA tracer does not trust".into(),
                _ => format!("{}", other.0),
            };
            let hint = if inner == "UnknownIssuer" { TRUST } else { "" };
            return (why, inner, hint);
        }
        other => (format!("{other}"), ""),
    };
    (why, name, hint)
}

/// The variant's name from its debug form: `ExpiredContext { .. }` → `ExpiredContext`.
fn variant_name(debug: &str) -> String {
    debug
        .split(['(', ' ', '{'])
        .next()
        .unwrap_or(debug)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_is_said_in_words() {
        // As hyper-rustls hands it over: tokio-rustls's io::Error inside another.
        let io = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            TlsError::InvalidCertificate(CertificateError::UnknownIssuer),
        ));
        let words = tls_failure(&io).unwrap();
        assert!(
            words.starts_with("the upstream's certificate was refused: it was issued by a CA"),
            "{words}"
        );
        assert!(words.contains("(UnknownIssuer)") && words.contains("--upstream-ca"));
        let expired = TlsError::InvalidCertificate(CertificateError::Expired);
        assert_eq!(
            tls_failure(&expired).unwrap(),
            "the upstream's certificate was refused: it has expired (Expired)"
        );
        assert_eq!(tls_failure(&std::io::Error::other("refused")), None);
    }
}
