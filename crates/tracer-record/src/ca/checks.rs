//! What tracer checks before it trusts the CA on disk: a directory and files only their owner
//! can change, a key only its owner can read, and a certificate that belongs to that key (a CA
//! swapped in by someone else is refused, not used to mint certificates clients trust).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::sign::{CertifiedKey, SigningKey};

use super::{CaError, io_error};

/// Permission bits that let group or others write.
const WRITABLE_BY_OTHERS: u32 = 0o022;
/// Permission bits that let group or others do anything at all.
const OPEN_TO_OTHERS: u32 = 0o077;

fn bad(path: &Path, message: String) -> CaError {
    CaError::Bad {
        path: path.display().to_string(),
        message,
    }
}

/// The directory is the user's own and only theirs to write (else anyone who can write there
/// can put in a CA of their own).
pub(crate) fn check_dir(dir: &Path) -> Result<(), CaError> {
    let meta = std::fs::metadata(dir).map_err(|e| io_error(dir, e))?;
    check_owner(dir, &meta, "the CA directory")?;
    let mode = meta.mode() & 0o7777;
    if mode & WRITABLE_BY_OTHERS != 0 {
        return Err(bad(
            dir,
            format!(
                "refusing the CA directory: it is writable by {} (mode {mode:04o}), so anyone \
                 there could swap in a CA of their own; make it yours alone: `chmod 700 {}`",
                who(mode & WRITABLE_BY_OTHERS),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The key is a file the user owns, readable and writable by them alone.
pub(crate) fn check_key_file(key: &Path) -> Result<(), CaError> {
    let meta = std::fs::metadata(key).map_err(|e| io_error(key, e))?;
    check_owner(key, &meta, "the CA key")?;
    let mode = meta.mode() & 0o7777;
    if mode & OPEN_TO_OTHERS != 0 {
        return Err(bad(
            key,
            format!(
                "refusing the CA key: it is open to {} (mode {mode:04o}); whoever reads it can \
                 impersonate any site to clients that trust tracer's CA: `chmod 600 {}`, and \
                 make a new CA (delete the directory's two tracer-ca files) if others may have \
                 read it",
                who(mode & OPEN_TO_OTHERS),
                key.display()
            ),
        ));
    }
    Ok(())
}

/// The certificate is a file only the user can change.
pub(crate) fn check_cert_file(cert: &Path) -> Result<(), CaError> {
    let meta = std::fs::metadata(cert).map_err(|e| io_error(cert, e))?;
    check_owner(cert, &meta, "the CA certificate")?;
    let mode = meta.mode() & 0o7777;
    if mode & WRITABLE_BY_OTHERS != 0 {
        return Err(bad(
            cert,
            format!(
                "refusing the CA certificate: it is writable by {} (mode {mode:04o}): \
                 `chmod 644 {}`",
                who(mode & WRITABLE_BY_OTHERS),
                cert.display()
            ),
        ));
    }
    Ok(())
}

/// The certificate carries the public half of `signer`'s key.
pub(crate) fn check_pair(
    cert_path: &Path,
    cert: Option<CertificateDer<'static>>,
    signer: Arc<dyn SigningKey>,
) -> Result<(), CaError> {
    let Some(cert) = cert else {
        return Err(bad(cert_path, "not a PEM certificate".into()));
    };
    CertifiedKey::new(vec![cert], signer)
        .keys_match()
        .map_err(|error| {
            bad(
                cert_path,
                format!(
                    "refusing the CA certificate: it does not belong to the key beside it \
                     ({error}); was it replaced? Delete both tracer-ca files to make a new CA"
                ),
            )
        })
}

fn check_owner(path: &Path, meta: &std::fs::Metadata, what: &str) -> Result<(), CaError> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(bad(
            path,
            format!(
                "refusing {what}: it belongs to user {} and tracer runs as user {me}",
                meta.uid()
            ),
        ));
    }
    Ok(())
}

fn who(bits: u32) -> &'static str {
    match (bits & 0o070 != 0, bits & 0o007 != 0) {
        (true, true) => "group and others",
        (true, false) => "its group",
        _ => "others",
    }
}
