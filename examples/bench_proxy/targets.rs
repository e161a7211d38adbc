//! The proxies under test, each in its own process so its peak RSS is its own: tracer (this
//! example re-executed in child mode, running the proxy through the library), nginx and mitmdump.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_store::{Store, WriterReport};

/// The flag that turns this example into the tracer proxy child.
pub const CHILD_FLAG: &str = "--child-proxy";
/// How the tracer child runs.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The recorder channel's capacity; 0 detaches the store (a diagnostic): the writer task is
    /// stopped at once, so the proxy captures every hop but hands none over.
    pub capacity: usize,
    /// A current-thread main runtime (accept loop, writer, grouping) instead of `tracer`'s
    /// multi-thread one; connections are on the connection workers either way (a diagnostic).
    pub one_thread: bool,
    /// Live grouping every 250 ms, as `tracer proxy` runs it (off: a diagnostic of its cost).
    pub grouping: bool,
    /// Hops handed to a sink that keeps nothing: no journal, no store (a diagnostic of the
    /// capture's own cost).
    pub discard: bool,
}

impl Variant {
    /// As `tracer proxy` runs: 8192 events of recorder channel, a multi-thread runtime.
    pub const CLI: Variant = Variant {
        capacity: 8192,
        one_thread: false,
        grouping: true,
        discard: false,
    };
}

/// Child mode's entry: `UPSTREAM DB CAPACITY|discard multi|one grouping|no-grouping`.
pub fn child_main(args: &[String]) -> anyhow::Result<()> {
    let [upstream, db, capacity, threads, grouping] = args else {
        bail!("child mode takes UPSTREAM DB CAPACITY|discard multi|one grouping|no-grouping");
    };
    let discard = capacity == "discard";
    let capacity = if discard { "0" } else { capacity.as_str() };
    let grouping = grouping == "grouping";
    // Warnings (a grouping pass that failed, a batch retried) on the child's stderr.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TRACER_BENCH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let capacity: usize = capacity.parse().context("child mode: capacity")?;
    let runtime = match threads.as_str() {
        "one" => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    runtime.block_on(run_tracer_child(
        upstream,
        Path::new(db),
        capacity,
        grouping,
        discard,
    ))
}

/// Child mode: record into `db`, forward to `upstream`, print `LISTEN addr`, and stop cleanly
/// (in-flight hops finished and written) on stdin close or SIGINT, then print `DONE ...`.
async fn run_tracer_child(
    upstream: &str,
    db: &Path,
    capacity: usize,
    grouping: bool,
    discard: bool,
) -> anyhow::Result<()> {
    let store = Store::open(db).await?;
    let route = Route::new(
        "model",
        "bench",
        "127.0.0.1:0",
        &format!("http://{upstream}"),
    )
    .map_err(|message| anyhow::anyhow!(message))?;
    let proxy = Proxy::bind(vec![route], ProxySettings::default()).await?;
    let listen = proxy
        .routes()
        .first()
        .map(|route| route.listen)
        .context("the proxy has no route")?;
    println!("LISTEN {listen}");
    if discard {
        // Every hop is captured as usual and handed to a sink that keeps nothing.
        let stats = proxy
            .run(crate::floors::Nowhere, stdin_closed_or_ctrl_c())
            .await;
        println!(
            "DONE hops_written=0 hops_not_written=0 connections={} cut_off={}",
            stats.connections, stats.cut_off
        );
        return Ok(());
    }
    let (recorder, writer) = tracer_store::Recorder::spawn(store.clone())?;
    if capacity == 0 {
        writer.abort();
    }
    // Live grouping, as `tracer proxy` runs it (it reads back what the writer wrote).
    let (stop_grouping, grouping_stopped) = tokio::sync::oneshot::channel::<()>();
    let grouping = grouping.then(|| {
        tokio::spawn(tracer_live::correlate::group_until(
            store.clone(),
            Duration::from_millis(250),
            async move {
                let _ = grouping_stopped.await;
            },
        ))
    });
    let stats = proxy.run(recorder, stdin_closed_or_ctrl_c()).await;
    let report = match writer.await {
        Ok(report) => report,
        Err(error) if error.is_cancelled() => WriterReport::default(),
        Err(error) => return Err(error).context("waiting for the store writer"),
    };
    let _ = stop_grouping.send(());
    if let Some(grouping) = grouping {
        let _ = grouping.await;
    }
    store.close().await;
    println!(
        "DONE hops_written={} hops_not_written={} connections={} cut_off={} events={} batches={}",
        report.hops_written,
        report.hops_not_written,
        stats.connections,
        stats.cut_off,
        report.events_written,
        report.batches
    );
    Ok(())
}

pub async fn stdin_closed_or_ctrl_c() {
    let stdin_closed = async {
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    tokio::select! {
        _ = stdin_closed => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// The tracer child seen from the bench.
pub struct TracerChild {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    pub addr: SocketAddr,
}

impl TracerChild {
    pub async fn start(
        upstream: SocketAddr,
        db: &Path,
        variant: Variant,
    ) -> anyhow::Result<TracerChild> {
        let args = [
            CHILD_FLAG.to_string(),
            upstream.to_string(),
            db.display().to_string(),
            if variant.discard {
                "discard".to_string()
            } else {
                variant.capacity.to_string()
            },
            if variant.one_thread { "one" } else { "multi" }.to_string(),
            if variant.grouping {
                "grouping"
            } else {
                "no-grouping"
            }
            .to_string(),
        ];
        Self::start_with(&args).await
    }

    /// This example re-executed with `args` (a child flag first); it prints `LISTEN addr`.
    pub async fn start_with(args: &[String]) -> anyhow::Result<TracerChild> {
        let exe = std::env::current_exe().context("finding this executable")?;
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting the tracer child")?;
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().context("child stdout")?);
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(30), stdout.read_line(&mut line))
            .await
            .context("the tracer child did not start within 30 s")??;
        let addr = line
            .trim()
            .strip_prefix("LISTEN ")
            .with_context(|| format!("unexpected first line from the tracer child: {line:?}"))?
            .parse()?;
        Ok(TracerChild {
            child,
            stdin,
            stdout,
            addr,
        })
    }

    /// Peak RSS in KiB so far.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.child.id().and_then(crate::procfs::tree_peak_rss_kib)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Closes stdin (the clean stop) and returns the child's `DONE` line.
    pub async fn stop(mut self) -> anyhow::Result<String> {
        drop(self.stdin.take());
        let mut rest = String::new();
        tokio::time::timeout(
            Duration::from_secs(60),
            self.stdout.read_to_string(&mut rest),
        )
        .await
        .context("the tracer child did not stop within 60 s")??;
        let status = self.child.wait().await?;
        if !status.success() {
            bail!("the tracer child exited with {status}");
        }
        rest.lines()
            .find(|line| line.starts_with("DONE "))
            .map(|line| line.trim_start_matches("DONE ").to_string())
            .context("the tracer child ended without its DONE line")
    }
}

/// A third-party proxy (nginx or mitmdump) running as a child, with its temp directory.
pub struct External {
    pub child: Child,
    pub addr: SocketAddr,
    pub stop_signal: &'static str,
    pub _dir: tempfile::TempDir,
}

impl External {
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.child.id().and_then(crate::procfs::tree_peak_rss_kib)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-s", self.stop_signal, &pid.to_string()])
                .status()
                .await;
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// nginx as a plain reverse proxy: keep-alive to the upstream, no buffering, no access log.
pub async fn start_nginx(nginx: &Path, upstream: SocketAddr) -> anyhow::Result<External> {
    let dir = tempfile::tempdir()?;
    let addr = free_port()?;
    let prefix = dir.path().display();
    let user = if running_as_root() {
        "user root;\n"
    } else {
        ""
    };
    let conf = format!(
        "{user}worker_processes auto;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log warn;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n\
         \x20 fastcgi_temp_path {prefix}/fastcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n  scgi_temp_path {prefix}/scgi;\n\
         \x20 upstream bench_upstream {{ server {upstream}; keepalive 64; }}\n\
         \x20 server {{\n    listen {addr};\n    location / {{\n      proxy_pass http://bench_upstream;\n\
         \x20     proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n\
         \x20     proxy_buffering off;\n      proxy_request_buffering off;\n    }}\n  }}\n}}\n"
    );
    let conf_path = dir.path().join("nginx.conf");
    std::fs::write(&conf_path, conf)?;
    let child = Command::new(nginx)
        .arg("-p")
        .arg(dir.path())
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .arg("-c")
        .arg(&conf_path)
        .args(["-g", "daemon off;"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", nginx.display()))?;
    let external = External {
        child,
        addr,
        stop_signal: "QUIT",
        _dir: dir,
    };
    wait_listening(addr, Duration::from_secs(10)).await?;
    Ok(external)
}

/// `mitmdump --mode reverse:...`, quiet, with bodies streamed (not held) so chunk timing means
/// something; its own config directory in a temp dir.
pub async fn start_mitmdump(mitmdump: &Path, upstream: SocketAddr) -> anyhow::Result<External> {
    let dir = tempfile::tempdir()?;
    let addr = free_port()?;
    let child = Command::new(mitmdump)
        .arg("--mode")
        .arg(format!("reverse:http://{upstream}"))
        .args([
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            &addr.port().to_string(),
        ])
        .arg("--set")
        .arg(format!("confdir={}", dir.path().display()))
        .args([
            "--set",
            "stream_large_bodies=1",
            "--set",
            "flow_detail=0",
            "-q",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", mitmdump.display()))?;
    let external = External {
        child,
        addr,
        stop_signal: "INT",
        _dir: dir,
    };
    wait_listening(addr, Duration::from_secs(30)).await?;
    Ok(external)
}

/// A port that was free a moment ago (the tool binds it itself).
pub fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

pub async fn wait_listening(addr: SocketAddr, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("nothing listens on {addr} after {limit:?}")
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .map(|line| line.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A tool found on PATH (and, for nginx, in /usr/sbin, which a non-root PATH may lack).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
