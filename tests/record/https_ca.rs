//! `tracer ca`: made once in the directory the flag or the environment names, the key readable
//! by its owner only, the path alone on stdout's last line; `--env` points the trust variables
//! at a bundle of the system's roots plus the CA.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn tracer_ca(args: &[&str], envs: &[(&str, &Path)]) -> (String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .arg("ca")
        .args(args)
        .env_remove("TRACER_CA_DIR")
        .env_remove("XDG_DATA_HOME");
    for (name, value) in envs {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    (String::from_utf8(output.stdout).unwrap(), stderr)
}

#[test]
fn the_ca_is_created_once_where_asked_with_its_key_private() {
    let dir = tempfile::tempdir().unwrap();
    let flag_dir = dir.path().join("flag");
    let flag = flag_dir.to_str().unwrap();
    let (stdout, stderr) = tracer_ca(&["--ca-dir", flag], &[]);
    let cert = flag_dir.join("tracer-ca.pem");
    assert_eq!(stdout.lines().last().unwrap(), cert.to_str().unwrap());
    assert!(stderr.contains("created a CA"), "{stderr}");
    let key_mode = std::fs::metadata(flag_dir.join("tracer-ca-key.pem"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(key_mode & 0o777, 0o600, "the CA key is the owner's alone");
    let first = std::fs::read(&cert).unwrap();
    let (_, stderr) = tracer_ca(&["--ca-dir", flag], &[]);
    assert!(!stderr.contains("created"), "made once: {stderr}");
    assert_eq!(std::fs::read(&cert).unwrap(), first);

    // No flag: $TRACER_CA_DIR, then $XDG_DATA_HOME/tracer, then ~/.local/share/tracer.
    let env_dir = dir.path().join("env");
    let (stdout, _) = tracer_ca(&[], &[("TRACER_CA_DIR", &env_dir), ("HOME", dir.path())]);
    assert_eq!(
        stdout.trim(),
        env_dir.join("tracer-ca.pem").to_str().unwrap()
    );
    let xdg = dir.path().join("xdg");
    let (stdout, _) = tracer_ca(&[], &[("XDG_DATA_HOME", &xdg), ("HOME", dir.path())]);
    assert_eq!(
        stdout.trim(),
        xdg.join("tracer/tracer-ca.pem").to_str().unwrap()
    );
    let (stdout, _) = tracer_ca(&[], &[("HOME", dir.path())]);
    let home_cert = dir.path().join(".local/share/tracer/tracer-ca.pem");
    assert_eq!(stdout.trim(), home_cert.to_str().unwrap());
}

#[test]
fn env_points_every_trust_variable_at_roots_plus_the_ca() {
    let dir = tempfile::tempdir().unwrap();
    let ca_dir = dir.path().to_str().unwrap();
    let (stdout, _) = tracer_ca(&["--ca-dir", ca_dir, "--env"], &[]);
    let bundle = dir.path().join("tracer-ca-bundle.pem");
    for name in [
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "CURL_CA_BUNDLE",
    ] {
        let line = format!("export {name}='{}'", bundle.display());
        assert!(stdout.lines().any(|l| l == line), "{line} in {stdout}");
    }
    let text = std::fs::read_to_string(&bundle).unwrap();
    let ca = std::fs::read_to_string(dir.path().join("tracer-ca.pem")).unwrap();
    assert!(text.ends_with(&ca), "the CA closes the bundle");
    // Run again with the bundle already in SSL_CERT_FILE: the CA is not added twice.
    let (_, _) = tracer_ca(
        &["--ca-dir", ca_dir, "--env"],
        &[("SSL_CERT_FILE", &bundle)],
    );
    let again = std::fs::read_to_string(&bundle).unwrap();
    assert_eq!(again.matches(ca.trim()).count(), 1);
    assert_eq!(again.len(), text.len());
}
