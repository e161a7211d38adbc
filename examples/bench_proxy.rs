//! `cargo run --release --example bench_proxy`: the recording proxy against a direct connection,
//! nginx and mitmdump, in one run, on loopback, with the bench's own upstream.
//!
//! Measures req/s at concurrency 1 and 50 for a small JSON POST, first-byte latency at c=1, 8
//! and 32, inter-chunk jitter of a 20-chunk NDJSON stream (10 ms apart), hops sent vs hops
//! written, and each proxy's peak RSS; then a sustained c=50 phase (tracer's whole-run CPU per
//! hop until every row is in a trace, against hyper alone) and a 14 MiB SSE answer through the
//! `tracer proxy` binary. Tracer runs in its own process: this example re-executes itself with a
//! hidden child flag and runs the proxy through the library; so does hyper alone, the floor
//! issue 49's goals are stated against.

#[path = "bench_proxy/big_body.rs"]
mod big_body;
#[path = "bench_proxy/database.rs"]
mod database;
#[path = "bench_proxy/floors.rs"]
mod floors;
#[path = "bench_proxy/goals.rs"]
mod goals;
#[path = "bench_proxy/https.rs"]
mod https;
#[path = "bench_proxy/https_load.rs"]
mod https_load;
#[path = "bench_proxy/load.rs"]
mod load;
#[path = "bench_proxy/procfs.rs"]
mod procfs;
#[path = "bench_proxy/report.rs"]
mod report;
#[path = "bench_proxy/rounds.rs"]
mod rounds;
#[path = "bench_proxy/sse_proxy.rs"]
mod sse_proxy;
#[path = "bench_proxy/sse_stream.rs"]
mod sse_stream;
#[path = "bench_proxy/sustained.rs"]
mod sustained;
#[path = "bench_proxy/targets.rs"]
mod targets;
#[path = "bench_proxy/upstream.rs"]
mod upstream;
#[path = "bench_proxy/writer_alone.rs"]
mod writer_alone;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;

use report::HopCheck;

/// Benchmark tracer's recording proxy against direct, nginx and mitmdump.
#[derive(Debug, Parser)]
#[command(name = "bench_proxy")]
struct Options {
    /// Seconds of load per path at each concurrency (split over the rounds)
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Rounds the load is interleaved in (every path gets a slice per round)
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Seconds of warm-up load (c=50) per path
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// NDJSON streams (20 chunks, 10 ms apart) per path, one after another, split over the rounds
    #[arg(long, default_value_t = 25)]
    streams: u32,
    /// The nginx binary (default: `nginx` on PATH or in /usr/sbin)
    #[arg(long, value_name = "PATH")]
    nginx: Option<PathBuf>,
    /// The mitmdump binary (default: `mitmdump` on PATH)
    #[arg(long, value_name = "PATH")]
    mitmdump: Option<PathBuf>,
    /// Add diagnostic columns: tracer with its store writer stopped, so no hop reaches SQLite
    /// (the proxy path's and the journal's own cost), tracer handing hops to a sink that keeps
    /// nothing (the capture's own cost), tracer with live grouping off (what grouping costs) and
    /// tracer with its main runtime (accept loop, writer, grouping) on one thread. (hyper alone,
    /// hyper's server and pooled client forwarding with nothing recorded, is always a column.)
    #[arg(long)]
    diagnose: bool,
    /// Seconds of the sustained phase after the rounds: c=50 through tracer, then through hyper
    /// alone, each alone on the machine; tracer's CPU is counted until every row is in a trace
    /// (0 skips it)
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    sustained: f64,
    /// Skip the 14 MiB SSE answer through the `tracer proxy` binary
    #[arg(long)]
    no_sse: bool,
    /// The `tracer` binary the 14 MiB SSE answer goes through
    #[arg(long, value_name = "PATH", default_value_os_t = sse_proxy::default_tracer())]
    tracer: PathBuf,
    /// Skip the HTTPS columns (TLS upstream, forward proxy intercepting, mitmdump regular)
    #[arg(long, conflicts_with = "https_only")]
    no_https: bool,
    /// Run only the HTTPS columns
    #[arg(long)]
    https_only: bool,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.get(1..) {
        Some([flag, rest @ ..]) if flag == targets::CHILD_FLAG => targets::child_main(rest),
        Some([flag, rest @ ..]) if flag == https::CHILD_FLAG => https::child_main(rest),
        Some([flag, rest @ ..]) if flag == floors::CHILD_FLAG => floors::child_main(rest),
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the runtime")
            .and_then(|runtime| runtime.block_on(bench(Options::parse()))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench_proxy: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(options: Options) -> anyhow::Result<()> {
    anyhow::ensure!(
        options.seconds > 0.0
            && options.seconds <= 60.0
            && options.warmup >= 0.0
            && options.warmup <= 60.0,
        "--seconds must be in (0, 60] and --warmup in [0, 60]"
    );
    anyhow::ensure!(
        (1..=1000).contains(&options.streams) && (1..=20).contains(&options.rounds),
        "--streams must be 1..=1000 and --rounds 1..=20"
    );
    anyhow::ensure!(
        (0.0..=600.0).contains(&options.sustained),
        "--sustained must be in [0, 600]"
    );
    let clock = Instant::now();
    let mitmdump_binary = options
        .mitmdump
        .clone()
        .or_else(|| targets::find_tool("mitmdump"));
    if options.https_only {
        return https::bench(
            clock,
            options.seconds,
            options.rounds,
            options.warmup,
            mitmdump_binary,
        )
        .await;
    }
    let upstream = upstream::spawn(clock)
        .await
        .context("starting the upstream")?;
    println!(
        "upstream on {upstream}; per path: {} s warm-up, {} NDJSON streams, {} s at c=1, {:.2} s at c=8 and at c=32, {} s at c=50 in {} interleaved rounds",
        options.warmup,
        options.streams,
        options.seconds,
        options.seconds / 3.0,
        options.seconds,
        options.rounds
    );
    println!("load average at start: {}", load_average());

    let dir = tempfile::tempdir()?;
    let db = dir.path().join("bench.db");
    let mut subjects = vec![rounds::Subject::new(
        "direct",
        upstream,
        rounds::Process::Direct,
    )];
    let tracer = targets::TracerChild::start(upstream, &db, targets::Variant::CLI).await?;
    subjects.push(rounds::Subject::new(
        "tracer",
        tracer.addr,
        rounds::Process::Tracer(tracer),
    ));
    let floor =
        targets::TracerChild::start_with(&[floors::CHILD_FLAG.to_string(), upstream.to_string()])
            .await?;
    subjects.push(rounds::Subject::new(
        "hyper alone",
        floor.addr,
        rounds::Process::Tracer(floor),
    ));
    if options.diagnose {
        for (name, variant) in floors::tracer_variants() {
            let db = dir.path().join(format!("diagnostic-{}.db", subjects.len()));
            let tracer = targets::TracerChild::start(upstream, &db, variant).await?;
            subjects.push(rounds::Subject::new(
                name,
                tracer.addr,
                rounds::Process::Tracer(tracer),
            ));
        }
    }
    let nginx = options
        .nginx
        .clone()
        .or_else(|| targets::find_tool("nginx"));
    match nginx {
        None => println!("note: nginx not found (apt-get install -y nginx-light); no nginx column"),
        Some(path) => match targets::start_nginx(&path, upstream).await {
            Ok(proxy) => subjects.push(rounds::Subject::new(
                "nginx",
                proxy.addr,
                rounds::Process::External(proxy),
            )),
            Err(error) => println!("note: nginx did not start ({error:#}); no nginx column"),
        },
    }
    let mitmdump = options
        .mitmdump
        .clone()
        .or_else(|| targets::find_tool("mitmdump"));
    match mitmdump {
        None => println!(
            "note: mitmdump not found (pip install mitmproxy; then PATH or --mitmdump PATH); no mitmdump column"
        ),
        Some(path) => match targets::start_mitmdump(&path, upstream).await {
            Ok(proxy) => subjects.push(rounds::Subject::new(
                "mitmdump",
                proxy.addr,
                rounds::Process::External(proxy),
            )),
            Err(error) => println!("note: mitmdump did not start ({error:#}); no mitmdump column"),
        },
    }

    let plan = rounds::Plan {
        seconds: options.seconds,
        warmup: options.warmup,
        streams: options.streams,
        rounds: options.rounds,
    };
    rounds::measure_all(&mut subjects, &plan, clock).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let after_load = database::backlog(&db).await?;
    let sustained = if options.sustained > 0.0 {
        Some(sustained::run(&mut subjects, &db, options.sustained).await?)
    } else {
        None
    };
    let big = big_body_through_tracer(&mut subjects).await?;
    let sse = if options.no_sse {
        None
    } else {
        match sse_proxy::run_or_skip(&options.tracer, upstream).await {
            Ok(run) => Some(run),
            Err(note) => {
                println!("{note}");
                None
            }
        }
    };

    let mut columns = Vec::new();
    let mut tracer_threads = Vec::new();
    let mut hops = HopCheck::default();
    for mut subject in subjects {
        columns.push(subject.column());
        let sent = subject.sent();
        match subject.process {
            rounds::Process::Direct => {}
            rounds::Process::Tracer(child) => {
                let is_main = subject.name == "tracer";
                if is_main {
                    tracer_threads = child
                        .pid()
                        .map(procfs::cpu_seconds_by_thread)
                        .unwrap_or_default();
                }
                let said = child.stop().await?;
                if is_main {
                    // The two 1 GiB exchanges are hops too.
                    hops = database::count_hops(&db, sent + 2, said).await?;
                    hops.after_load = Some(after_load);
                } else if subject.name != "hyper alone" {
                    println!("diagnostic `{}` child at exit: {said}", subject.name);
                }
            }
            rounds::Process::External(external) => external.stop().await,
        }
    }

    println!("measuring the store writer alone ({WRITER_ALONE_HOPS} hops queued at once) ...");
    let writer = writer_alone::measure(WRITER_ALONE_HOPS).await?;
    println!("load average at end: {}", load_average());

    println!();
    print!("{}", report::table(&columns));
    println!();
    println!("tracer child at exit: {}", hops.child_said);
    let threads: Vec<String> = tracer_threads
        .iter()
        .map(|(name, seconds)| format!("{name} {seconds:.2} s"))
        .collect();
    println!(
        "tracer child CPU by thread (whole run): {}",
        threads.join(", ")
    );
    println!(
        "store writer alone: {} of {} hops written in {:.2} s = {:.0} hops/s ({} not written)",
        writer.written,
        writer.hops,
        writer.elapsed.as_secs_f64(),
        writer.per_second(),
        writer.not_written
    );
    let threads: Vec<String> = writer
        .threads
        .iter()
        .map(|(name, seconds)| format!("{name} {seconds:.2} s"))
        .collect();
    println!("store writer alone, CPU by thread: {}", threads.join(", "));
    if let Some(sustained) = &sustained {
        print!("{}", sustained::describe(sustained));
    }
    if let Some(sse) = &sse {
        print!("{}", sse_proxy::describe(sse));
    }
    println!(
        "1 GiB through tracer: upload {:.1} s ({} bytes arrived), download {:.1} s ({} bytes); \
         tracer peak RSS {:.1} MiB before, {:.1} MiB after (the table's figure is after)",
        big.body.upload.as_secs_f64(),
        big.body.uploaded,
        big.body.download.as_secs_f64(),
        big.body.downloaded,
        big.rss_before_kib as f64 / 1024.0,
        big.rss_after_kib as f64 / 1024.0,
    );
    println!();
    print!(
        "{}",
        goals::lines(&goals::Inputs {
            columns: &columns,
            hops: &hops,
            sustained: sustained.as_ref(),
            sse: sse.as_ref(),
        })
    );
    if !options.no_https {
        println!();
        https::bench(
            clock,
            options.seconds,
            options.rounds,
            options.warmup,
            mitmdump_binary,
        )
        .await?;
    }
    Ok(())
}

struct BigRun {
    body: big_body::BigBody,
    rss_before_kib: u64,
    rss_after_kib: u64,
}

/// Streams 1 GiB each way through the main tracer child, reading its peak RSS around it.
async fn big_body_through_tracer(subjects: &mut [rounds::Subject]) -> anyhow::Result<BigRun> {
    let tracer = subjects
        .iter()
        .find(|s| s.name == "tracer")
        .context("no tracer subject")?;
    let pid = tracer.pid().context("tracer child pid")?;
    let rss_before_kib = procfs::tree_peak_rss_kib(pid).unwrap_or(0);
    println!("streaming 1 GiB each way through tracer ...");
    let body = big_body::measure(tracer.addr).await?;
    let rss_after_kib = procfs::tree_peak_rss_kib(pid).unwrap_or(0);
    Ok(BigRun {
        body,
        rss_before_kib,
        rss_after_kib,
    })
}

/// Hops the writer-alone measurement queues.
const WRITER_ALONE_HOPS: u64 = 20_000;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}
