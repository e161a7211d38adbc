//! `tracer ca`: create (once) and locate tracer's CA; `--env` prints the trust variables that
//! point clients at the system's roots plus that CA (the set `tracer run` gives its child), and
//! with `--proxy ADDR` the proxy variables too.

use std::process::ExitCode;

use super::CaArgs;
use super::stdout_text::{out, outln};
use crate::run::env::{export_lines, proxy_env, trust_env};
use tracer_record::ca::{CertAuthority, Created, KEY_FILE, ca_dir};

pub fn run(args: CaArgs) -> anyhow::Result<ExitCode> {
    let dir = ca_dir(args.ca_dir.as_deref())?;
    let (ca, created) = CertAuthority::load_or_create(&dir)?;
    if created == Created::New {
        tracer_serve::say!(
            "tracer: created a CA in {} (its key, {KEY_FILE}, is readable by you only)",
            dir.display()
        );
    }
    if args.env {
        let bundle = ca.write_bundle()?;
        let mut env = args.proxy.map(proxy_env).unwrap_or_default();
        env.extend(trust_env(&bundle));
        out!("{}", export_lines(&env))?;
    } else {
        outln!("{}", ca.cert_path().display())?;
    }
    Ok(ExitCode::SUCCESS)
}
