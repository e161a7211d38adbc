//! `tracer ca`: create (once) and locate tracer's CA; `--env` prints the trust variables that
//! point clients at the system's roots plus that CA.

use std::path::Path;
use std::process::ExitCode;

use super::CaArgs;
use super::stdout_text::{out, outln};
use crate::ca::{CertAuthority, Created, KEY_FILE, ca_dir};

/// The variables that Python (ssl, httpx, requests), Node and curl read for their roots.
pub const TRUST_VARIABLES: [&str; 4] = [
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "CURL_CA_BUNDLE",
];

pub fn run(args: CaArgs) -> anyhow::Result<ExitCode> {
    let dir = ca_dir(args.ca_dir.as_deref())?;
    let (ca, created) = CertAuthority::load_or_create(&dir)?;
    if created == Created::New {
        crate::say!(
            "tracer: created a CA in {} (its key, {KEY_FILE}, is readable by you only)",
            dir.display()
        );
    }
    if args.env {
        let bundle = ca.write_bundle()?;
        out!("{}", env_lines(&bundle))?;
    } else {
        outln!("{}", ca.cert_path().display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `export NAME='PATH'` for each trust variable, quoted for sh.
pub fn env_lines(bundle: &Path) -> String {
    let quoted = format!("'{}'", bundle.display().to_string().replace('\'', r"'\''"));
    TRUST_VARIABLES
        .iter()
        .map(|name| format!("export {name}={quoted}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_lines_are_quoted_for_the_shell() {
        let lines = env_lines(Path::new("/home/o'neil/tracer-ca-bundle.pem"));
        assert!(
            lines.starts_with("export SSL_CERT_FILE='/home/o'\\''neil/tracer-ca-bundle.pem'\n")
        );
        assert_eq!(lines.lines().count(), 4);
    }
}
