//! The HTTPS columns: the bench's upstream behind TLS (a CA made by rcgen, a certificate for
//! 127.0.0.1), reached directly over TLS, through tracer's reverse route to `https://`, through
//! tracer's forward proxy intercepting (`CONNECT`, tracer's CA), and through mitmdump in regular
//! mode intercepting (its CA). Same client, same upstream, interleaved rounds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::process::Command;
use tracer_record::ca::{CertAuthority, ca_dir};
use tracer_record::proxy::tls::UpstreamTls;
use tracer_record::proxy::{ForwardSettings, Proxy, ProxySettings, Route};
use tracer_store::{Recorder, Store};

use crate::https_load::{Dial, client_config, json_load, probe};
use crate::load::percentile;
use crate::targets::{External, TracerChild, free_port, wait_listening};

/// The flag that turns this example into an HTTPS tracer child.
pub const CHILD_FLAG: &str = "--child-https";

/// Child mode's entry: `reverse|forward UPSTREAM DB CA_FILE CA_DIR`.
pub fn child_main(args: &[String]) -> anyhow::Result<()> {
    let [mode, upstream, db, ca_file, ca_home] = args else {
        bail!("HTTPS child mode takes reverse|forward UPSTREAM DB CA_FILE CA_DIR");
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_child(
        mode == "forward",
        upstream,
        Path::new(db),
        Path::new(ca_file),
        Path::new(ca_home),
    ))
}

async fn run_child(
    forward: bool,
    upstream: &str,
    db: &Path,
    ca_file: &Path,
    ca_home: &Path,
) -> anyhow::Result<()> {
    let store = Store::open(db).await?;
    let settings = ProxySettings {
        upstream_tls: UpstreamTls {
            extra_cas: vec![ca_file.to_path_buf()],
            resolve: Vec::new(),
        },
        ..ProxySettings::default()
    };
    let (proxy, listen) = if forward {
        let (ca, _) = CertAuthority::load_or_create(&ca_dir(Some(ca_home))?)?;
        let proxy = Proxy::bind(Vec::new(), settings)
            .await?
            .with_forward(ForwardSettings {
                listen: "127.0.0.1:0".parse()?,
                intercept: Vec::new(),
                host_roles: Vec::new(),
                ca: Arc::new(ca),
                limits: tracer_record::proxy::ForwardLimits::default(),
                identify_clients: true,
            })
            .await?;
        let listen = proxy.forward_addr().context("no forward listener")?;
        (proxy, listen)
    } else {
        let route = Route::new(
            "model",
            "bench",
            "127.0.0.1:0",
            &format!("https://{upstream}"),
        )
        .map_err(anyhow::Error::msg)?;
        let proxy = Proxy::bind(vec![route], settings).await?;
        let listen = proxy.routes().first().context("no route")?.listen;
        (proxy, listen)
    };
    println!("LISTEN {listen}");
    let (recorder, writer) = Recorder::spawn(store.clone())?;
    let stats = proxy
        .run(recorder, crate::targets::stdin_closed_or_ctrl_c())
        .await;
    let report = writer.await.context("waiting for the store writer")?;
    store.close().await;
    println!(
        "DONE hops_written={} hops_not_written={} connections={} cut_off={}",
        report.hops_written, report.hops_not_written, stats.connections, stats.cut_off
    );
    Ok(())
}

/// The bench's TLS identity: a CA and a certificate for 127.0.0.1 it signed.
fn bench_pki(dir: &Path) -> anyhow::Result<(PathBuf, tokio_rustls::TlsAcceptor)> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "bench_proxy upstream CA");
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])?.signed_by(&key, &issuer)?;
    let ca_path = dir.join("upstream-ca.pem");
    std::fs::write(&ca_path, ca_cert.pem())?;
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], key)?;
    Ok((ca_path, tokio_rustls::TlsAcceptor::from(Arc::new(config))))
}

/// One HTTPS path and what it measured.
struct HttpsPath {
    name: &'static str,
    dial: Dial,
    tracer: Option<TracerChild>,
    external: Option<External>,
    ok_c1: u64,
    secs_c1: f64,
    ok_c50: u64,
    secs_c50: f64,
    errors: u64,
    first_byte: Vec<Duration>,
}

impl HttpsPath {
    fn new(name: &'static str, dial: Dial) -> HttpsPath {
        HttpsPath {
            name,
            dial,
            tracer: None,
            external: None,
            ok_c1: 0,
            secs_c1: 0.0,
            ok_c50: 0,
            secs_c50: 0.0,
            errors: 0,
            first_byte: Vec::new(),
        }
    }
}

/// Runs the HTTPS columns and prints their table.
pub async fn bench(
    clock: Instant,
    seconds: f64,
    rounds: u32,
    warmup: f64,
    mitmdump: Option<PathBuf>,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (ca_path, acceptor) = bench_pki(dir.path())?;
    let upstream = crate::upstream::spawn_tls(clock, acceptor).await?;
    let upstream_roots = client_config(&std::fs::read(&ca_path)?)?;
    println!("HTTPS upstream on {upstream} (TLS 1.3, HTTP/1.1, certificate for 127.0.0.1)");

    let mut paths = vec![HttpsPath::new(
        "direct TLS",
        Dial::Tls {
            addr: upstream,
            config: upstream_roots.clone(),
        },
    )];
    let child = |mode: &str, db: &str| {
        [
            CHILD_FLAG.to_string(),
            mode.to_string(),
            upstream.to_string(),
            dir.path().join(db).display().to_string(),
            ca_path.display().to_string(),
            dir.path().join("tracer-ca").display().to_string(),
        ]
    };
    let reverse = TracerChild::start_with(&child("reverse", "reverse.db")).await?;
    let mut path = HttpsPath::new("tracer → https", Dial::Plain(reverse.addr));
    path.tracer = Some(reverse);
    paths.push(path);
    let forward = TracerChild::start_with(&child("forward", "forward.db")).await?;
    let tracer_ca = std::fs::read(
        dir.path()
            .join("tracer-ca")
            .join(tracer_record::ca::CERT_FILE),
    )?;
    let mut path = HttpsPath::new(
        "tracer forward",
        Dial::Tunnel {
            proxy: forward.addr,
            target: upstream,
            config: client_config(&tracer_ca)?,
        },
    );
    path.tracer = Some(forward);
    paths.push(path);
    match mitmdump {
        None => println!("note: mitmdump not found; no mitmdump (regular) column"),
        Some(binary) => match start_mitmdump_regular(&binary, &ca_path).await {
            Ok((external, ca)) => {
                let mut path = HttpsPath::new(
                    "mitmdump regular",
                    Dial::Tunnel {
                        proxy: external.addr,
                        target: upstream,
                        config: client_config(&ca)?,
                    },
                );
                path.external = Some(external);
                paths.push(path);
            }
            Err(error) => println!("note: mitmdump did not start ({error:#}); no column"),
        },
    }
    for path in &paths {
        probe(&path.dial)
            .await
            .with_context(|| format!("{}: a first request failed", path.name))?;
        json_load(&path.dial, 50, Duration::from_secs_f64(warmup)).await;
    }
    let slice = Duration::from_secs_f64(seconds / f64::from(rounds));
    for round in 0..rounds as usize {
        let count = paths.len();
        for k in 0..count {
            let path = &mut paths[(k + round) % count];
            let c1 = json_load(&path.dial, 1, slice).await;
            path.ok_c1 += c1.ok;
            path.secs_c1 += c1.elapsed.as_secs_f64();
            path.first_byte.extend(c1.first_byte);
            let c50 = json_load(&path.dial, 50, slice).await;
            path.ok_c50 += c50.ok;
            path.secs_c50 += c50.elapsed.as_secs_f64();
            path.errors += c1.errors + c50.errors;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    print_table(&mut paths);
    for path in paths {
        if let Some(child) = path.tracer {
            println!("{} child at exit: {}", path.name, child.stop().await?);
        }
        if let Some(external) = path.external {
            external.stop().await;
        }
    }
    Ok(())
}

fn print_table(paths: &mut [HttpsPath]) {
    let rps = |ok: u64, secs: f64| ok as f64 / secs.max(1e-9);
    let p = |samples: &mut Vec<Duration>, q: f64| {
        percentile(samples, q).map_or("–".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
    };
    println!();
    let names: Vec<&str> = paths.iter().map(|p| p.name).collect();
    println!("| HTTPS | {} |", names.join(" | "));
    println!("|---|{}", "---:|".repeat(paths.len()));
    let c1: Vec<f64> = paths.iter().map(|x| rps(x.ok_c1, x.secs_c1)).collect();
    let c50: Vec<f64> = paths.iter().map(|x| rps(x.ok_c50, x.secs_c50)).collect();
    let row = |label: &str, cells: Vec<String>| println!("| {label} | {} |", cells.join(" | "));
    row("req/s, c=1", c1.iter().map(|v| format!("{v:.0}")).collect());
    row(
        "req/s, c=50",
        c50.iter().map(|v| format!("{v:.0}")).collect(),
    );
    row(
        "req/s c=50 vs direct TLS",
        c50.iter().map(|v| format!("{:.2}×", v / c50[0])).collect(),
    );
    let p50: Vec<String> = paths
        .iter_mut()
        .map(|x| p(&mut x.first_byte, 0.5))
        .collect();
    let p99: Vec<String> = paths
        .iter_mut()
        .map(|x| p(&mut x.first_byte, 0.99))
        .collect();
    row("first byte p50, c=1 (ms)", p50.clone());
    row("first byte p99, c=1 (ms)", p99);
    row(
        "errors",
        paths.iter().map(|x| x.errors.to_string()).collect(),
    );
    println!();
    let ms = |s: &str| s.parse::<f64>().ok();
    if let (Some(tracer), Some(direct)) = (ms(&p50[1]), ms(&p50[0])) {
        let added = tracer - direct;
        let verdict = if added <= 0.2 { "met" } else { "not met" };
        println!(
            "added first byte, warm pooled TLS upstream (tracer → https vs direct TLS), p50: {added:+.3} ms (goal ≤ 0.2 ms: {verdict})"
        );
    }
    if let Some(mitm) = paths.iter().position(|x| x.name == "mitmdump regular") {
        let ratio = c50[2] / c50[mitm].max(1e-9);
        let verdict = if ratio >= 20.0 { "met" } else { "not met" };
        println!(
            "forward mode throughput, c=50: tracer {:.0} req/s vs mitmdump {:.0} req/s = {ratio:.1}× (goal ≥ 20×: {verdict})",
            c50[2], c50[mitm]
        );
    }
}

/// `mitmdump --mode regular` intercepting, trusting the bench's upstream CA; returns it and the
/// CA certificate it made (clients trust that one).
async fn start_mitmdump_regular(
    mitmdump: &Path,
    upstream_ca: &Path,
) -> anyhow::Result<(External, Vec<u8>)> {
    let dir = tempfile::tempdir()?;
    let addr = free_port()?;
    let child = Command::new(mitmdump)
        .args(["--mode", "regular", "--listen-host", "127.0.0.1"])
        .args(["--listen-port", &addr.port().to_string()])
        .arg("--set")
        .arg(format!("confdir={}", dir.path().display()))
        .arg("--set")
        .arg(format!(
            "ssl_verify_upstream_trusted_ca={}",
            upstream_ca.display()
        ))
        .args([
            "--set",
            "stream_large_bodies=1",
            "--set",
            "flow_detail=0",
            "-q",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", mitmdump.display()))?;
    let ca_file = dir.path().join("mitmproxy-ca-cert.pem");
    let external = External {
        child,
        addr,
        stop_signal: "INT",
        _dir: dir,
    };
    wait_listening(addr, Duration::from_secs(30)).await?;
    let ca = std::fs::read(&ca_file).with_context(|| format!("reading {}", ca_file.display()))?;
    Ok((external, ca))
}
