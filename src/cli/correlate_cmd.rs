//! `tracer correlate [--rebuild]`: group recorded hops into traces (the incremental pass the
//! other commands run is `tracer_live::correlate::group_new_hops`).

use std::path::Path;
use std::process::ExitCode;

use super::CorrelateArgs;
use super::stdout_text::outln;
use tracer_live::correlate::{CorrelateReport, GroupScope, correlate};
use tracer_store::Store;
use tracer_trace::GroupOptions;
use tracer_trace::words::plural;

pub async fn run(db: &Path, args: CorrelateArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    let mode = if args.rebuild {
        GroupScope::Rebuild
    } else {
        GroupScope::Unassigned
    };
    let report = correlate(&store, GroupOptions::default(), mode).await?;
    store.close().await;
    outln!("{}", describe(&report, args.rebuild))?;
    Ok(ExitCode::SUCCESS)
}

fn describe(report: &CorrelateReport, rebuild: bool) -> String {
    let mut line = format!(
        "{} {} into {}",
        if rebuild { "regrouped" } else { "grouped" },
        plural(report.assigned, "hop"),
        plural(report.traces, "trace")
    );
    if report.kept > 0 {
        let kept = plural(report.kept, "hop");
        line.push_str(&format!("; {kept} kept their trace"));
    }
    if report.waiting > 0 {
        line.push_str(&format!(
            "; {} in flight left for a later run",
            plural(report.waiting, "hop")
        ));
    }
    line
}
