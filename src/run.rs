//! `tracer run -- COMMAND`: what a traced program gets (the proxy and trust variables for every
//! common runtime, `env`), which hosts are decrypted (`hosts`), how a known agent's stdio MCP
//! servers are started through `tracer wrap` for one run without touching the user's files
//! (`agents`), and the child itself (`child`). The command (`cli/run_cmd.rs`) puts them together.

pub mod agent_telemetry;
pub mod agents;
pub mod child;
pub mod env;
pub mod hosts;
mod jsonc;

use std::path::{Path, PathBuf};

/// tracer's private directory for one run (mode 0700 in the temp folder), removed at the end;
/// override files are written here and nowhere else.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    pub fn create() -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let name = format!("tracer-run-{}", tracer_wire::ids::random_hex_id(8));
        let dir = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
