//! Finding the Python peers of the interop tests: a virtualenv in the repo that can import the
//! peer. Missing, the test says why and skips, unless `TRACER_INTEROP=1` (CI), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `VENV/bin/python` when it exists and can `import MODULE` (installed with `pip install PACKAGE`).
pub fn venv_python(venv: &str, module: &str, package: &str) -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(venv)
        .join("bin/python");
    let importable = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
    if importable {
        return Some(python);
    }
    let message = format!(
        "{} cannot import {module}; run `bash scripts/test` (it installs the peers) or \
         `python3 -m venv {venv} && {venv}/bin/pip install {package}`",
        python.display()
    );
    assert!(
        std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
        "TRACER_INTEROP=1 but {message}"
    );
    eprintln!("skipping an interop test: {message}");
    None
}
