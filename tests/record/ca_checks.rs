//! tracer refuses a CA it cannot trust, in one line that says how to fix it: a directory others
//! can write, a key others can read, a certificate that is not the key's; and `ca --env` writes
//! its bundle without following a link planted in the CA directory.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn tracer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(args)
        .env_remove("TRACER_CA_DIR")
        .env("RUST_LOG", "off")
        .output()
        .unwrap()
}

fn ca(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["ca", "--ca-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    tracer(&args)
}

/// Asserts the command failed with exit 1 and one line of stderr containing every `wanted`.
fn refused(output: &Output, wanted: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for part in wanted {
        assert!(stderr.contains(part), "{part:?} in {stderr}");
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn made_ca(root: &Path, name: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    let output = ca(&dir, &[]);
    assert!(output.status.success(), "{output:?}");
    dir
}

#[test]
fn a_ca_directory_others_can_write_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = made_ca(root.path(), "ca");
    for mode in [0o777, 0o770, 0o702] {
        chmod(&dir, mode);
        refused(&ca(&dir, &[]), &["refusing the CA directory", "chmod 700"]);
    }
    // The forward proxy, which mints with the CA, refuses it alike.
    let db = root.path().join("t.db");
    let forward = [
        "--db",
        db.to_str().unwrap(),
        "proxy",
        "--forward",
        "127.0.0.1:0",
        "--ca-dir",
        dir.to_str().unwrap(),
    ];
    refused(&tracer(&forward), &["refusing the CA directory"]);
    chmod(&dir, 0o700);
    assert!(ca(&dir, &[]).status.success());
    // No key is ever made in a directory that was open to others from the start.
    let open = root.path().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    refused(&ca(&open, &[]), &["refusing the CA directory"]);
    assert!(!open.join("tracer-ca-key.pem").exists());
}

#[test]
fn a_ca_key_others_can_read_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = made_ca(root.path(), "ca");
    let key = dir.join("tracer-ca-key.pem");
    for mode in [0o644, 0o640, 0o604] {
        chmod(&key, mode);
        refused(&ca(&dir, &[]), &["refusing the CA key", "chmod 600"]);
    }
    chmod(&key, 0o600);
    assert!(ca(&dir, &[]).status.success());
}

#[test]
fn a_ca_certificate_swapped_in_from_another_ca_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let ours = made_ca(root.path(), "ours");
    let theirs = made_ca(root.path(), "theirs");
    std::fs::copy(theirs.join("tracer-ca.pem"), ours.join("tracer-ca.pem")).unwrap();
    refused(
        &ca(&ours, &[]),
        &["refusing the CA certificate", "does not belong to the key"],
    );
    // A certificate others can write is refused too.
    chmod(&theirs.join("tracer-ca.pem"), 0o666);
    refused(
        &ca(&theirs, &[]),
        &["refusing the CA certificate", "chmod 644"],
    );
}

#[test]
fn the_bundle_is_written_without_following_links() {
    let root = tempfile::tempdir().unwrap();
    let dir = made_ca(root.path(), "ca");
    let victim = root.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // A link at the old fixed temporary name, and one in place of the bundle itself.
    std::os::unix::fs::symlink(&victim, dir.join("tracer-ca-bundle.pem.tmp")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("tracer-ca-bundle.pem")).unwrap();
    let output = ca(&dir, &["--env"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let bundle = dir.join("tracer-ca-bundle.pem");
    let meta = std::fs::symlink_metadata(&bundle).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the link was replaced by a file"
    );
    let text = std::fs::read_to_string(&bundle).unwrap();
    let ours = std::fs::read_to_string(dir.join("tracer-ca.pem")).unwrap();
    assert!(
        text.contains(ours.lines().nth(1).unwrap()),
        "the bundle holds our CA"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(bundle.to_str().unwrap()), "{stdout}");
    // Nothing half-written is left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp") && name != "tracer-ca-bundle.pem.tmp")
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn a_ca_made_under_a_permissive_umask_is_accepted_with_safe_modes() {
    use std::os::unix::fs::MetadataExt;
    let root = tempfile::tempdir().unwrap();
    for (umask, name) in [("002", "u002"), ("000", "u000")] {
        let dir = root.path().join(name);
        // Many systems' default umask is 002: the CA tracer makes must not be refused by tracer.
        let made = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask}; exec \"$0\" ca --ca-dir \"$1\" --env"
            ))
            .arg(env!("CARGO_BIN_EXE_tracer"))
            .arg(&dir)
            .env_remove("TRACER_CA_DIR")
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        assert!(made.status.success(), "umask {umask}: {made:?}");
        let mode = |file: &str| std::fs::metadata(dir.join(file)).unwrap().mode() & 0o777;
        assert_eq!(mode("tracer-ca.pem"), 0o644, "umask {umask}");
        assert_eq!(mode("tracer-ca-key.pem"), 0o600, "umask {umask}");
        assert_eq!(
            std::fs::metadata(&dir).unwrap().mode() & 0o777,
            0o700,
            "umask {umask}"
        );
        // And it is used again as it is.
        let again = ca(&dir, &["--env"]);
        assert!(again.status.success(), "umask {umask}: {again:?}");
    }
}
