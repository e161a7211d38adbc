//! tracer's own certificate authority: where it lives, creating it once (key readable by the
//! owner only), minting cached per-host certificates for the forward proxy, and the trust bundle
//! (the system's roots plus this CA) that `tracer ca --env` points clients at.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;

mod checks;

/// The CA certificate (install this one in clients).
pub const CERT_FILE: &str = "tracer-ca.pem";
/// The CA's private key (mode 0600; never give it away).
pub const KEY_FILE: &str = "tracer-ca-key.pem";
/// The system's roots plus tracer's CA, for clients that take one file of roots.
const BUNDLE_FILE: &str = "tracer-ca-bundle.pem";

/// Minted certificates kept before the cache starts over.
const CACHE_LIMIT: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Bad { path: String, message: String },
    #[error("making a certificate for `{host}`: {message}")]
    Mint { host: String, message: String },
    #[error(
        "no directory for tracer's CA: give --ca-dir, or set TRACER_CA_DIR, XDG_DATA_HOME or HOME"
    )]
    NoDirectory,
}

/// The CA's directory: `--ca-dir`, else `$TRACER_CA_DIR`, else `$XDG_DATA_HOME/tracer`, else
/// `~/.local/share/tracer`.
pub fn ca_dir(flag: Option<&Path>) -> Result<PathBuf, CaError> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = var("TRACER_CA_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(data) = var("XDG_DATA_HOME") {
        return Ok(PathBuf::from(data).join("tracer"));
    }
    var("HOME")
        .map(|home| PathBuf::from(home).join(".local/share/tracer"))
        .ok_or(CaError::NoDirectory)
}

/// A loaded CA, ready to mint server certificates.
pub struct CertAuthority {
    dir: PathBuf,
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// One key for every minted certificate (as mitmproxy does): minting stays cheap.
    leaf_key: KeyPair,
    leaf_signer: Arc<dyn rustls::sign::SigningKey>,
    minted: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for CertAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertAuthority")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Whether `load_or_create` made a new CA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    New,
    Existing,
}

impl CertAuthority {
    /// Loads the CA in `dir`, creating it (directory 0700, key 0600) when there is none.
    pub fn load_or_create(dir: &Path) -> Result<(CertAuthority, Created), CaError> {
        let cert_path = dir.join(CERT_FILE);
        let key_path = dir.join(KEY_FILE);
        let created = if cert_path.exists() || key_path.exists() {
            Created::Existing
        } else {
            create(dir, &cert_path, &key_path)?;
            Created::New
        };
        checks::check_dir(dir)?;
        checks::check_key_file(&key_path)?;
        checks::check_cert_file(&cert_path)?;
        let cert_pem = read(&cert_path)?;
        let key_pem = read(&key_path)?;
        let key = KeyPair::from_pem(&key_pem).map_err(|e| CaError::Bad {
            path: key_path.display().to_string(),
            message: format!("not a private key: {e}"),
        })?;
        let ca_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let ca_signer =
            rustls::crypto::ring::sign::any_supported_type(&ca_der).map_err(|e| CaError::Bad {
                path: key_path.display().to_string(),
                message: format!("not a usable private key: {e}"),
            })?;
        checks::check_pair(&cert_path, first_pem_cert(cert_pem.as_bytes()), ca_signer)?;
        let issuer = Issuer::new(ca_params(), key);
        let leaf_key = KeyPair::generate().map_err(|e| mint_error("*", e))?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let leaf_signer =
            rustls::crypto::ring::sign::any_supported_type(&der).map_err(|e| mint_error("*", e))?;
        Ok((
            CertAuthority {
                dir: dir.to_path_buf(),
                cert_pem,
                issuer,
                leaf_key,
                leaf_signer,
                minted: Mutex::new(HashMap::new()),
            },
            created,
        ))
    }

    pub fn cert_path(&self) -> PathBuf {
        self.dir.join(CERT_FILE)
    }

    #[cfg(test)]
    fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A certificate for `host` (a DNS name or an IP address), minted once and cached.
    pub(crate) fn certificate_for(&self, host: &str) -> Result<Arc<CertifiedKey>, CaError> {
        let host = host.to_ascii_lowercase();
        if let Some(found) = self.cache().get(&host) {
            return Ok(found.clone());
        }
        let mut params =
            CertificateParams::new(vec![host.clone()]).map_err(|e| mint_error(&host, e))?;
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, host.as_str());
        params.distinguished_name = name;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.use_authority_key_identifier_extension = true;
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(2);
        params.not_after = now + time::Duration::days(365);
        params.serial_number = Some(rand::random::<u64>().into());
        let cert = params
            .signed_by(&self.leaf_key, &self.issuer)
            .map_err(|e| mint_error(&host, e))?;
        let chain = vec![cert.der().clone()];
        let certified = Arc::new(CertifiedKey::new(chain, self.leaf_signer.clone()));
        let mut cache = self.cache();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(host, certified.clone());
        Ok(certified)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CertifiedKey>>> {
        self.minted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes the bundle of the system's roots plus this CA beside it; returns its path.
    pub fn write_bundle(&self) -> Result<PathBuf, CaError> {
        let path = self.dir.join(BUNDLE_FILE);
        let mut seen = std::collections::HashSet::new();
        let mut text = String::new();
        let ours = first_pem_cert(self.cert_pem.as_bytes());
        // When SSL_CERT_FILE already names this bundle, the roots read include ours: once each.
        for cert in platform_roots().into_iter().chain(ours) {
            if seen.insert(cert.as_ref().to_vec()) {
                text.push_str(&pem("CERTIFICATE", cert.as_ref()));
            }
        }
        write_atomically(&self.dir, &path, text.as_bytes())?;
        Ok(path)
    }
}

/// The first certificate in PEM text (the CA's own file).
fn first_pem_cert(bytes: &[u8]) -> Option<CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(bytes).next()?.ok()
}

/// The CA's subject and usages: the same on creation and on every load (the issuer of minted
/// certificates is named by these, and their signature checked with the stored key).
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "tracer local CA");
    name.push(DnType::OrganizationName, "tracer");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

fn create(dir: &Path, cert_path: &Path, key_path: &Path) -> Result<(), CaError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_error(dir, e))?;
    // A directory that was already there may be open to others: no key goes into it then.
    checks::check_dir(dir)?;
    let key = KeyPair::generate().map_err(|e| mint_error("the CA", e))?;
    let mut params = ca_params();
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(2);
    params.not_after = now + time::Duration::days(3650);
    let cert = params
        .self_signed(&key)
        .map_err(|e| mint_error("the CA", e))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(key_path)
        .map_err(|e| io_error(key_path, e))?;
    std::io::Write::write_all(&mut file, key.serialize_pem().as_bytes())
        .map_err(|e| io_error(key_path, e))?;
    // The certificate's mode is set, not left to the umask: under a umask of 002 (the default
    // of many systems) a plain write made it group-writable, and the checks refused it.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(cert_path)
        .map_err(|e| io_error(cert_path, e))?;
    std::io::Write::write_all(&mut file, cert.pem().as_bytes()).map_err(|e| io_error(cert_path, e))
}

/// Replaces `path` with `bytes` at once: written to a new file of a fresh random name in `dir`
/// (created exclusively, so a link planted there is never followed), then renamed over `path`
/// (which replaces a link at `path` rather than writing through it).
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CaError> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = format!(".{BUNDLE_FILE}.{}.tmp", tracer_wire::ids::random_hex_id(8));
    let temp = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&temp)
        .map_err(|e| io_error(&temp, e))?;
    let written = std::io::Write::write_all(&mut file, bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temp, path));
    written.map_err(|e| {
        // The file is ours (made just now, exclusively): it goes.
        let _ = std::fs::remove_file(&temp);
        io_error(path, e)
    })
}

fn read(path: &Path) -> Result<String, CaError> {
    std::fs::read_to_string(path).map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, source: std::io::Error) -> CaError {
    CaError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn mint_error(host: &str, error: impl std::fmt::Display) -> CaError {
    CaError::Mint {
        host: host.to_string(),
        message: error.to_string(),
    }
}

/// DER as PEM text, 64 base64 characters a line.
fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The platform's trusted roots (`SSL_CERT_FILE`/`SSL_CERT_DIR` when set, as OpenSSL reads them).
pub(crate) fn platform_roots() -> Vec<rustls::pki_types::CertificateDer<'static>> {
    rustls_native_certs::load_native_certs().certs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_ca_is_made_once_with_a_private_key_and_mints_cached_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let ca_home = dir.path().join("ca");
        let (ca, created) = CertAuthority::load_or_create(&ca_home).unwrap();
        assert_eq!(created, Created::New);
        let mode = std::fs::metadata(ca_home.join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let first = ca.certificate_for("API.example.test").unwrap();
        let again = ca.certificate_for("api.example.test").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        ca.certificate_for("127.0.0.1").unwrap();
        let (reloaded, created) = CertAuthority::load_or_create(&ca_home).unwrap();
        assert_eq!(created, Created::Existing);
        assert_eq!(reloaded.cert_pem(), ca.cert_pem());
        let bundle = std::fs::read_to_string(reloaded.write_bundle().unwrap()).unwrap();
        assert!(bundle.contains(ca.cert_pem().lines().nth(1).unwrap()));
    }

    #[test]
    fn the_directory_follows_flag_then_environment() {
        let flag = Path::new("/x/ca");
        assert_eq!(ca_dir(Some(flag)).unwrap(), flag);
    }
}
