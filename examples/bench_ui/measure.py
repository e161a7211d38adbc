"""The Playwright driver of examples/bench_ui.rs: times `tracer ui`'s page in a real headless
Chromium and prints one JSON object on stdout (progress on stderr).

    python3 measure.py --url http://127.0.0.1:PORT/ --mode session|big [--chromium PATH] [--runs N]

session: the longest trace of the database (a 600-turn agent session): the list's and the
trace's first meaningful paint, opening a sample of its messages, the tab's JS heap.
big: a database of many small traces: the list's first paint, jumping to its end, opening the
last trace and a message, the heap.

Each first paint is timed in a fresh browser context (an empty cache, as a first visit), from
just before `page.goto` to the first row visible (Playwright's wait). The timed actions inside a
page (a hash change, a click, a scroll) are timed in the page: performance.now() before the
action, a MutationObserver for the condition, then one frame (requestAnimationFrame and a task)
so that what appeared has been laid out and painted.
"""

import argparse
import json
import statistics
import sys
import time
import urllib.request

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}
TRACE_ROW = '[data-testid="trace-row"]'
MESSAGE_ROW = '[data-testid="message-row"]'
LIST_SCROLLER = ".list-view .scroller"
MESSAGE_SCROLLER = ".trace-main .panel:not([hidden]) .scroller"

# Before any script of the page: the time (from navigation start) the first trace row and the
# first message row entered the DOM, and the frame after it.
FIRST_ROWS = """
(() => {
  const seen = {};
  window.__bench = seen;
  const wanted = [['trace_row', '[data-testid="trace-row"]'], ['message_row', '[data-testid="message-row"]']];
  const check = () => {
    for (const [key, selector] of wanted) {
      if (seen[key] === undefined && document.querySelector(selector)) {
        seen[key] = performance.now();
        requestAnimationFrame(() => setTimeout(() => { seen[key + '_painted'] = performance.now(); }, 0));
      }
    }
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
})();
"""


# The page's requests to the API and its scripts, from navigation start: where a first paint's
# time went (the server's answer, or the page after it).
API_TIMES = """
(() => {
  const out = [];
  for (const e of performance.getEntriesByType('resource')) {
    const url = new URL(e.name);
    if (url.pathname === '/api/events') continue;
    if (url.pathname.startsWith('/api/')) {
      out.push({ path: url.pathname + url.search, start: e.startTime / 1000, first_byte: e.responseStart / 1000, end: e.responseEnd / 1000, bytes: e.encodedBodySize });
    }
  }
  const scripts = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.js'));
  const nav = performance.getEntriesByType('navigation')[0];
  return { requests: out, scripts_loaded: scripts.reduce((a, e) => Math.max(a, e.responseEnd), 0) / 1000, html_loaded: nav ? nav.responseEnd / 1000 : null };
})()
"""


SERVER_PID = None
RSS_BY_PHASE = []


def server_rss(phase):
    """Notes the server's VmRSS (MiB) after a phase, when its pid was given."""
    if SERVER_PID is None:
        return None
    try:
        with open(f"/proc/{SERVER_PID}/status") as status:
            kib = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration, ValueError):
        return None
    RSS_BY_PHASE.append([phase, kib / 1024])
    return kib / 1024


def log(*words):
    print("measure.py:", *words, file=sys.stderr, flush=True)


def get_json(base, path):
    with urllib.request.urlopen(base.rstrip("/") + path, timeout=600) as answer:
        return json.load(answer)


def timed(page, action, target, condition, timeout_ms):
    """Does action (hash, click, scroll-end) on target inside the page and waits for condition
    (a JS expression); returns seconds to the condition and to the frame after it, and what the
    condition's element says (for errors)."""
    source = """async ([action, target, timeoutMs]) => {
      const met = () => { try { return COND; } catch (e) { return false; } };
      const t0 = performance.now();
      if (action === 'hash') location.hash = target;
      else if (action === 'click') document.querySelector(target).click();
      else if (action === 'scroll-end') { const s = document.querySelector(target); s.scrollTop = s.scrollHeight; }
      const ok = await new Promise((resolve) => {
        if (met()) { resolve(true); return; }
        const timer = setTimeout(() => { observer.disconnect(); resolve(false); }, timeoutMs);
        const observer = new MutationObserver(() => {
          if (met()) { observer.disconnect(); clearTimeout(timer); resolve(true); }
        });
        observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
      });
      const found = performance.now();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return { ok, found: (found - t0) / 1000, painted: (performance.now() - t0) / 1000, t0: t0 / 1000 };
    }""".replace("COND", condition)
    return page.evaluate(source, [action, target, timeout_ms])


def body_rendered(number):
    """The message pane of message number shows its body (no longer 'loading the body…')."""
    slot = f'[data-testid="message-detail"][data-number="{number}"] .body-slot'
    return (f"(() => {{ const s = document.querySelector('{slot}'); "
            f"return Boolean(s) && !s.textContent.includes('loading the body'); }})()")


def at_end(scroller):
    """The virtualized list in scroller has drawn its last row."""
    return (f"(() => {{ const sp = document.querySelector('{scroller} .vlist-spacer'); if (!sp) return false; "
            "let end = 0; for (const r of sp.children) end = Math.max(end, parseFloat(r.style.top) + parseFloat(r.style.height)); "
            "return end >= parseFloat(sp.style.height) - 1; })()")


def body_slot_text(page, number):
    return page.evaluate("""(n) => {
      const s = document.querySelector(`[data-testid="message-detail"][data-number="${n}"] .body-slot`);
      return s ? s.textContent.slice(0, 120) : null;
    }""", number)


def first_paint(browser, url, selector, timeout_ms):
    """A fresh context: seconds from page.goto to the first selector visible, and the in-page
    times (from navigation start) of the first row in the DOM and the frame after it."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(FIRST_ROWS)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    started = time.perf_counter()
    try:
        page.goto(url, wait_until="commit", timeout=timeout_ms)
        page.wait_for_selector(selector, state="visible", timeout=timeout_ms)
        wall = time.perf_counter() - started
    except PlaywrightTimeout:
        wall = None
        errors.append(f"no {selector} within {timeout_ms} ms")
    seen = page.evaluate("window.__bench")
    seen["api"] = page.evaluate(API_TIMES)
    return context, page, wall, seen, errors


def paints(browser, url, selector, key, runs, timeout_ms):
    """runs first paints, each in its own context; returns the last context and page (open) and
    the figures."""
    walls, dom, painted, errors, api = [], [], [], [], []
    context = page = None
    for run in range(runs):
        if context is not None:
            context.close()
        context, page, wall, seen, errs = first_paint(browser, url, selector, timeout_ms)
        walls.append(wall)
        dom.append(seen[key] / 1000 if key in seen else None)
        painted.append(seen[key + "_painted"] / 1000 if key + "_painted" in seen else None)
        api.append(seen["api"])
        errors += errs
        log(f"first paint {run + 1}/{runs} of {url}: {wall if wall is None else round(wall, 3)} s")
    return context, page, {"wall_s": walls, "in_dom_s": dom, "painted_s": painted, "api": api, "page_errors": errors}


def heap(page):
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def read():
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return metrics.get("JSHeapUsedSize", 0) / 2**20, metrics.get("JSHeapTotalSize", 0) / 2**20, metrics.get("Nodes", 0)

    used, total, nodes = read()
    cdp.send("HeapProfiler.collectGarbage")
    after_gc, _, nodes_after = read()
    cdp.detach()
    return {"used_mib": used, "total_mib": total, "used_after_gc_mib": after_gc, "dom_nodes": nodes_after}


def open_messages(page, trace_id, sample, timeout_ms):
    """Opens each (number, bytes) of sample by a location.hash change; the time to its body."""
    opened = []
    for number, size in sample:
        t = timed(page, "hash", f"#/trace/{trace_id}/{number}", body_rendered(number), timeout_ms)
        slot = body_slot_text(page, number) or ""
        note = slot if "cannot load" in slot else ""
        # Its request: when it started after the hash changed, how long it took, its size.
        server = page.evaluate("""([n, t0]) => {
          const e = performance.getEntriesByType('resource').filter((e) => e.name.endsWith(`/message/${n}`)).pop();
          return e ? { started_s: e.startTime / 1000 - t0, s: (e.responseEnd - e.startTime) / 1000,
                       first_byte_s: (e.responseStart - e.startTime) / 1000, bytes: e.encodedBodySize } : null;
        }""", [number, t["t0"]])
        opened.append({"number": number, "bytes": size, "s": t["painted"] if t["ok"] else None, "found_s": t["found"],
                       "ok": t["ok"] and not note, "note": note, "request": server,
                       "server_rss_mib": server_rss(f"message {number} opened")})
        log(f"message {number} ({size} bytes): {t['painted']:.3f} s{' ' + note if note else ''}"
            f"{'' if t['ok'] else ' (timed out)'}; its request {server}")
    return opened


def stats(values):
    if any(v is None for v in values):
        return {"p50_s": None, "max_s": None, "timed_out": sum(v is None for v in values)}
    return {"p50_s": statistics.median(values), "max_s": max(values)} if values else {}


def trace_facts(base, trace_id):
    doc = get_json(base, f"/api/trace/{trace_id}")
    messages = [m for m in doc.get("messages", []) if not m.get("unsent")]
    sized = [(m["number"], (m.get("body") or {}).get("length") or 0) for m in messages]
    return doc, messages, sized


def session_mode(browser, base, runs, timeout_ms):
    out = {"mode": "session"}
    server_rss("at start")
    listing = get_json(base, "/api/traces?limit=1000")
    longest = max(listing["traces"], key=lambda t: t.get("hop_count") or 0)
    trace_id = longest["id"]
    # The page first: its first run of the trace is the server's first build of it.
    context, page, out["list_paint"] = paints(browser, base, TRACE_ROW, "trace_row", runs, timeout_ms)
    server_rss("the list painted")
    context.close()
    context, page, out["trace_paint"] = paints(browser, f"{base}#/trace/{trace_id}", MESSAGE_ROW, "message_row", runs, timeout_ms)
    server_rss("the trace painted")

    doc, messages, sized = trace_facts(base, trace_id)
    largest = max(sized, key=lambda x: x[1])
    out["trace"] = {"id": trace_id, "hops": longest.get("hop_count"), "messages": len(messages),
                    "body_bytes": sum(s for _, s in sized), "largest": {"number": largest[0], "bytes": largest[1]},
                    "traces_in_db": listing["total"]}
    log(f"the long trace {trace_id}: {longest.get('hop_count')} hops, {len(messages)} messages, "
        f"{sum(s for _, s in sized) / 2**20:.1f} MiB of bodies; largest body {largest[1]} bytes (message {largest[0]})")

    # Messages across the trace: first, middle, last, the largest body, and evenly between.
    numbers = [n for n, _ in sized]
    picks = {numbers[0], numbers[len(numbers) // 2], numbers[-1], largest[0]}
    for i in range(1, 10):
        picks.add(numbers[i * (len(numbers) - 1) // 10])
    size_of = dict(sized)
    sample = [(n, size_of[n]) for n in sorted(picks)]
    opened = open_messages(page, trace_id, sample, timeout_ms)
    out["messages"] = opened
    out["message_stats"] = stats([o["s"] for o in opened])
    out["largest_s"] = next(o["s"] for o in opened if o["number"] == largest[0])
    out["largest_request"] = next(o["request"] for o in opened if o["number"] == largest[0])

    # From the top (the last message opened may have scrolled it to the end already).
    page.evaluate(f"document.querySelector('{MESSAGE_SCROLLER}').scrollTop = 0")
    page.wait_for_timeout(500)
    t = timed(page, "scroll-end", MESSAGE_SCROLLER, at_end(MESSAGE_SCROLLER), timeout_ms)
    out["message_list_end_s"] = t["painted"] if t["ok"] else None
    log(f"the message list scrolled to its end: {t['painted']:.3f} s (ok: {t['ok']})")
    out["heap"] = heap(page)
    log(f"JS heap {out['heap']['used_mib']:.1f} MiB used ({out['heap']['used_after_gc_mib']:.1f} after a GC)")
    server_rss("at the end")
    context.close()
    return out


def big_mode(browser, base, runs, timeout_ms):
    out = {"mode": "big"}
    total = get_json(base, "/api/traces?limit=1")["total"]
    out["traces_in_db"] = total
    server_rss("before the page")
    context, page, out["list_paint"] = paints(browser, base, TRACE_ROW, "trace_row", runs, timeout_ms)
    server_rss("the list painted")

    last = total - 1
    t = timed(page, "scroll-end", LIST_SCROLLER, f"Boolean(document.querySelector('{TRACE_ROW}[data-index=\"{last}\"]'))", timeout_ms)
    out["list_end_s"] = t["painted"] if t["ok"] else None
    log(f"the list scrolled to its end (row {last}): {t['painted']:.3f} s (ok: {t['ok']})")
    server_rss("the list's end shown")

    trace_id = page.evaluate(f"document.querySelector('{TRACE_ROW}[data-index=\"{last}\"]').dataset.id")
    t = timed(page, "click", f'{TRACE_ROW}[data-index="{last}"]', f"Boolean(document.querySelector('{MESSAGE_ROW}'))", timeout_ms)
    out["trace_open_s"] = t["painted"] if t["ok"] else None
    log(f"opened the last trace {trace_id} by a click: {t['painted']:.3f} s (ok: {t['ok']})")
    server_rss("the last trace opened")

    doc, messages, sized = trace_facts(base, trace_id)
    largest = max(sized, key=lambda x: x[1])
    out["trace"] = {"id": trace_id, "hops": doc["trace"].get("hop_count"), "messages": len(messages),
                    "body_bytes": sum(s for _, s in sized), "largest": {"number": largest[0], "bytes": largest[1]}}
    sample = sorted({sized[0], largest, sized[-1]})
    opened = open_messages(page, trace_id, sample, timeout_ms)
    out["messages"] = opened
    out["message_stats"] = stats([o["s"] for o in opened])

    # Back to the list, kept where it was, and to its end again: the heap with the list's pages.
    page.evaluate("location.hash = '#/'")
    page.wait_for_selector(TRACE_ROW, state="visible", timeout=timeout_ms)
    out["heap"] = heap(page)
    log(f"JS heap {out['heap']['used_mib']:.1f} MiB used ({out['heap']['used_after_gc_mib']:.1f} after a GC)")
    server_rss("at the end")
    context.close()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", choices=["session", "big"], required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout-ms", type=int, default=600000)
    parser.add_argument("--server-pid", type=int, help="the server's pid: its RSS after each phase")
    args = parser.parse_args()
    global SERVER_PID
    SERVER_PID = args.server_pid
    base = args.url.split("#")[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        try:
            run = session_mode if args.mode == "session" else big_mode
            out = run(browser, base, args.runs, args.timeout_ms)
            out["chromium"] = browser.version
            out["server_rss"] = RSS_BY_PHASE
        finally:
            browser.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
