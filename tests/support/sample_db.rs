//! A tracer database holding the sample traces (sample-traces/*.json), made with `tracer import`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const TRACER: &str = env!("CARGO_BIN_EXE_tracer");
/// The buy-milk sample's trace id.
pub const BUY_MILK: &str = "f0de9080c655d264f0fe0380c6b54c51";
/// The newest sample trace (the phonebook's).
pub const NEWEST: &str = "e99b8aca44b0142202f81b643a3c5a02";

/// The sample hop logs, in name order.
pub fn sample_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("sample-traces/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// `DIR/tracer.db` with every sample trace imported by the real `tracer import`.
pub fn sample_db(dir: &Path) -> PathBuf {
    let db = dir.join("tracer.db");
    for file in sample_files() {
        let output = Command::new(TRACER)
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(&file)
            .output()
            .expect("tracer import runs");
        assert!(
            output.status.success(),
            "importing {}: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    db
}
