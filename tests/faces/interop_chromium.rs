//! Interop: the buy-milk handout in a real browser. Headless Chromium loads the page from
//! `file://` (no network: background networking, component updates and sync off, a fresh
//! profile), `--dump-dom` shows the ten messages and the contents its script built (its console
//! no Content-Security-Policy violation), and a screenshot is taken (written to
//! docs/html-export.png when TRACER_UPDATE_SCREENSHOT=1).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::html_export::export_html;
use crate::sample_db::{BUY_MILK, sample_db};

/// A Chromium on PATH, or None after saying why (a failure when TRACER_INTEROP=1).
pub(crate) fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        if let Some(found) = std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
        {
            return Some(found);
        }
    }
    let message = "no Chromium on PATH (chromium, chromium-browser, google-chrome); \
                   install it with `apt-get install -y chromium` (.ci/run does)";
    assert!(
        std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
        "TRACER_INTEROP=1 but {message}"
    );
    eprintln!("skipping an interop test: {message}");
    None
}

/// Runs headless Chromium with a fresh profile and a generous deadline; its output goes to files
/// beside the profile (a page's DOM is larger than a pipe holds).
pub(crate) fn run_chromium(chromium: &Path, profile: &Path, args: &[String]) -> Output {
    let stdout_path = profile.with_extension("stdout");
    let stderr_path = profile.with_extension("stderr");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(&stdout_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&stderr_path).unwrap()))
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: std::fs::read(&stdout_path).unwrap(),
        stderr: std::fs::read(&stderr_path).unwrap(),
    }
}

#[test]
fn interop_chromium_runs_the_buy_milk_page() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let page = dir.path().join("buy-milk.html");
    export_html(&db, BUY_MILK, &page);
    let url = format!("file://{}", page.display());

    // The console goes to stderr, so a Content-Security-Policy violation would show there.
    let dumped = run_chromium(
        &chromium,
        &dir.path().join("profile-dom"),
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
            url.clone(),
        ],
    );
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let console = String::from_utf8_lossy(&dumped.stderr);
    assert!(dumped.status.success(), "{console}");
    assert!(
        !console.contains("Content Security Policy"),
        "the page's own style and script are allowed: {console}"
    );
    assert!(
        dom.contains("data-ready=\"true\""),
        "the page's script ran: {}",
        &dom[..dom.len().min(500)]
    );
    let toc_start = dom.find("<ol id=\"toc\">").expect("the contents list");
    let toc = &dom[toc_start..toc_start + dom[toc_start..].find("</ol>").unwrap()];
    assert_eq!(
        toc.matches("<li>").count(),
        10,
        "ten messages in the contents: {toc}"
    );
    assert!(
        toc.contains("<a href=\"#m5\">← ollama → agent 200 the model asks for tool append"),
        "{toc}"
    );
    for number in 1..=10 {
        assert!(
            dom.contains(&format!("id=\"m{number}\"")),
            "message {number} in the DOM"
        );
    }

    // A link to #m5 selects message 5, opens it and marks its arrow and its hop's bar.
    let linked = run_chromium(
        &chromium,
        &dir.path().join("profile-link"),
        &["--dump-dom".into(), format!("{url}#m5")],
    );
    let dom = String::from_utf8_lossy(&linked.stdout);
    assert!(
        dom.contains("<details class=\"message response current\" id=\"m5\" data-number=\"5\" data-hop=\"4\" open=\"\">"),
        "message 5 selected and open"
    );
    assert!(
        dom.contains("<g class=\"arrow response current\" id=\"a5\""),
        "its arrow"
    );
    assert!(
        dom.contains("<g class=\"bar model current\" id=\"b4\""),
        "its hop's bar"
    );

    let shot = dir.path().join("buy-milk.png");
    let taken = run_chromium(
        &chromium,
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,1500".into(),
            url,
        ],
    );
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let (width, height) = (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    );
    assert_eq!((width, height), (1200, 1500));
    assert!(
        png.len() > 50_000,
        "a page was drawn, not a blank: {} bytes",
        png.len()
    );
    // Printed, every message is opened first (the page's beforeprint handler): a handout of
    // many pages, not just the closed summaries (about three).
    let pdf = dir.path().join("buy-milk.pdf");
    let printed = run_chromium(
        &chromium,
        &dir.path().join("profile-print"),
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
            format!("file://{}", page.display()),
        ],
    );
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let pdf = std::fs::read(&pdf).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let pages = pdf
        .windows(11)
        .filter(|w| w.starts_with(b"/Type /Page") && w[10] != b's')
        .count()
        + pdf
            .windows(10)
            .filter(|w| w.starts_with(b"/Type/Page") && w[9] != b's')
            .count();
    assert!(pages >= 6, "{pages} pages printed");
    if std::env::var("TRACER_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/html-export.png");
        std::fs::write(docs, &png).unwrap();
    }
}
