//! `tracer correlate [--rebuild]`: group recorded hops into traces; also the incremental run that
//! `ls`, `show` and the proxy do so that hops written by other processes are grouped too.

use std::path::Path;
use std::process::ExitCode;

use super::CorrelateArgs;
use crate::store::Store;
use crate::trace::GroupOptions;
use crate::trace::correlate::{CorrelateReport, Mode, correlate};

pub async fn run(db: &Path, args: CorrelateArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    let mode = if args.rebuild {
        Mode::Rebuild
    } else {
        Mode::Unassigned
    };
    let report = correlate(&store, GroupOptions::default(), mode).await?;
    store.close().await;
    println!("{}", describe(&report, args.rebuild));
    Ok(ExitCode::SUCCESS)
}

/// Groups the hops that have no trace yet (idempotent; cheap when there are none).
pub async fn group_new_hops(store: &Store) -> anyhow::Result<CorrelateReport> {
    Ok(correlate(store, GroupOptions::default(), Mode::Unassigned).await?)
}

fn describe(report: &CorrelateReport, rebuild: bool) -> String {
    let mut line = format!(
        "{} {} hops into {} traces",
        if rebuild { "regrouped" } else { "grouped" },
        report.assigned,
        report.traces
    );
    if report.kept > 0 {
        line.push_str(&format!("; {} hops kept their trace", report.kept));
    }
    if report.waiting > 0 {
        line.push_str(&format!(
            "; {} hops in flight left for a later run",
            report.waiting
        ));
    }
    line
}
