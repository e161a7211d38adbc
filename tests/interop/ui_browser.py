"""Drives the `tracer ui` page in a real headless Chromium with Playwright (the system Chromium,
no browser download), one scenario per run, and prints one JSON line of what it found.

    ui_browser.py --url http://127.0.0.1:PORT/ --scenario NAME --chromium PATH \
        [--db DB --tracer TRACER] [--trace ID] [--import FILE] [--shots DIR]

Scenarios: reads, deeplink, search, hostile, live, reconnect, streaming, screens (see each
function below). Every run records the console's errors, uncaught page errors,
`securitypolicyviolation` events (an init script pushes them to window.__violations), dialogs
(dismissed), and every request's URL, and fails when a request left the server's origin, a
dialog opened, the policy was violated or the console said an error (reconnect allows the failed
connections of its event stream while the server is away).

Interactive scenarios (reconnect, streaming) print `READY` (and streaming later `SEEN {json}`)
and wait for a line on stdin before going on. On success the last line is
`{"scenario": ..., "ok": true, ...}` and the exit code 0; on failure
`{"scenario": ..., "ok": false, "error": ...}`, the error on stderr too, and exit code 1.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}

# Runs before any script of the page: policy violations are kept where the checks read them.
INIT_SCRIPT = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push({
    directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample,
    source: e.sourceFile, line: e.lineNumber,
  });
}, true);
// The live events the page was sent (type and the start of the data), for the checks and for
// saying what came when a check fails.
window.__events = [];
const PageEventSource = window.EventSource;
window.EventSource = class extends PageEventSource {
  constructor(...args) {
    super(...args);
    for (const type of ['trace', 'hop', 'stream', 'reset']) {
      this.addEventListener(type, (e) => window.__events.push([type, String(e.data).slice(0, 200)]));
    }
  }
};
"""

ROW = "[data-testid=trace-row]"
MESSAGE_ROW = "[data-testid=message-row]"
DETAIL = "[data-testid=message-detail]"

# What the hostile trace carries (tests/faces/hostile.rs and interop_ui.rs put it there).
HOSTILE_TEXTS = ["<script>", "<img src=x onerror=alert(1)>", "javascript:", "</textarea>"]
# Shown as escapes, never as they are: a U+202E would turn what follows it around on screen, an
# ESC or a C1 control shows as nothing or a box (crates/tracer-wire/src/safe_text.rs's rules).
ESCAPES = ["\\u{202e}", "\\x1b]52"]


def unsafe(c):
    code = ord(c)
    return (
        (code < 0x20 and c not in "\n\t")
        or 0x7F <= code <= 0x9F
        or 0x202A <= code <= 0x202E
        or 0x2066 <= code <= 0x2069
        or c in "\u200e\u200f\u061c"
    )


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def say(line):
    print(line, flush=True)


def wait_line(what):
    line = sys.stdin.readline()
    check(line != "", f"stdin closed while waiting for {what}")
    return line.strip()


class Run:
    """One page and what it was seen doing."""

    def __init__(self, args, page):
        self.args = args
        self.page = page
        parts = urlsplit(args.url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.console_errors = []
        self.page_errors = []
        self.dialogs = []
        self.requests = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self.requests.append(r.url))
        page.set_default_timeout(15000)

    def _console(self, message):
        if message.type == "error":
            location = message.location or {}
            self.console_errors.append(f"{message.text} ({location.get('url', '')})")

    def _dialog(self, dialog):
        self.dialogs.append({"type": dialog.type, "message": dialog.message})
        try:
            dialog.dismiss()
        except PlaywrightError:
            pass

    def base(self):
        return self.args.url.split("#")[0]

    def goto(self, hash_route=""):
        self.page.goto(self.base() + hash_route)

    def cli(self, *argv):
        check(self.args.tracer and self.args.db, "this scenario needs --tracer and --db")
        done = subprocess.run(
            [self.args.tracer, "--db", self.args.db, *argv],
            capture_output=True,
            timeout=60,
            check=False,
        )
        check(done.returncode == 0, f"tracer {' '.join(argv)}: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def cli_json(self, *argv):
        return json.loads(self.cli(*argv))

    def import_file(self):
        check(self.args.import_file, "this scenario needs --import FILE")
        new_id = json.loads(Path(self.args.import_file).read_text())["trace"]["id"]
        self.cli("import", self.args.import_file)
        return new_id

    def foreign_requests(self):
        return [
            url
            for url in self.requests
            if not (url.startswith(self.origin + "/") or url.startswith("data:"))
        ]

    def violations(self):
        return self.page.evaluate("window.__violations || []")

    def row_ids(self):
        """The trace rows' ids in list order (the rows are virtualized: by their index)."""
        return self.page.eval_on_selector_all(
            ROW,
            "els => els.map(e => [Number(e.dataset.index), e.dataset.id])"
            ".sort((a, b) => a[0] - b[0]).map(x => x[1])",
        )

    def message_rows(self):
        return self.page.eval_on_selector_all(
            MESSAGE_ROW,
            "els => els.map(e => [Number(e.dataset.number),"
            " e.querySelector('.m-summary').textContent])"
            ".sort((a, b) => a[0] - b[0])",
        )

    def open_trace_from_list(self, trace_id):
        self.page.click(f'{ROW}[data-id="{trace_id}"]')
        self.page.wait_for_selector("[data-testid=trace-title]")
        self.page.wait_for_selector(MESSAGE_ROW)

    def open_message(self, number):
        """Clicks message number and waits for its detail with its body loaded; the detail's text."""
        self.page.click(f'{MESSAGE_ROW}[data-number="{number}"]')
        return self.wait_detail(number)

    def wait_detail(self, number):
        selector = f'{DETAIL}[data-number="{number}"]'
        self.page.wait_for_selector(selector)
        self.page.wait_for_function(
            "sel => { const d = document.querySelector(sel);"
            " return d && d.querySelector('.body-slot')"
            " && !d.querySelector('.body-slot').textContent.includes('loading the body'); }",
            arg=selector,
        )
        return self.page.eval_on_selector(selector, "el => el.textContent")

    def detail_summary(self, number):
        return self.page.eval_on_selector(
            f'{DETAIL}[data-number="{number}"] .summary', "el => el.textContent"
        )

    def mark_page(self):
        """A mark that a reload would wipe."""
        self.page.evaluate("window.__notReloaded = true")

    def not_reloaded(self):
        return self.page.evaluate("window.__notReloaded === true")

    def wait_live(self, timeout_ms=15000):
        self.page.wait_for_selector("#live[data-state=live]", timeout=timeout_ms)

    def clean(self, allow_console=()):
        """Fails on a dialog, a policy violation, a request off the origin, a console error."""
        violations = self.violations()
        foreign = self.foreign_requests()
        tolerated = [e for e in self.console_errors if any(a in e for a in allow_console)]
        errors = [e for e in self.console_errors if e not in tolerated]
        check(not self.dialogs, f"a dialog opened: {self.dialogs}")
        check(not violations, f"Content-Security-Policy violations: {violations}")
        check(not foreign, f"requests left {self.origin}: {foreign[:5]}")
        check(not self.page_errors, f"uncaught errors in the page: {self.page_errors[:5]}")
        check(not errors, f"console errors: {errors[:5]}")
        return {
            "requests": len(self.requests),
            "foreign_requests": foreign,
            "dialogs": self.dialogs,
            "violations": violations,
            "console_errors": errors,
            "tolerated_console_errors": tolerated,
        }


def shown_messages(show):
    return [m for m in show["messages"] if not m.get("unsent")]


def scenario_reads(run):
    """The list is `ls --json`'s, in order; a trace's title and messages are `show --json`'s."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id, "reads needs --trace ID")
    run.goto()
    page.wait_for_selector(ROW)
    expected = [t["id"] for t in run.cli_json("ls", "--json", "-n", "1000")]
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=trace-row]').length >= n",
        arg=len(expected),
    )
    ids = run.row_ids()
    check(ids == expected, f"rows {ids} are not `ls --json`'s {expected}")

    show = run.cli_json("show", trace_id, "--json")
    title = show["trace"].get("title") or "(untitled)"
    run.open_trace_from_list(trace_id)
    shown_title = page.text_content("[data-testid=trace-title]")
    check(shown_title == title, f"title {shown_title!r} is not {title!r}")
    expected_rows = [[m["number"], m["summary"]] for m in shown_messages(show)]
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=message-row]').length >= n",
        arg=len(expected_rows),
    )
    rows = run.message_rows()
    check(rows == expected_rows, f"message rows {rows} are not `show --json`'s {expected_rows}")

    eight = next(m for m in show["messages"] if m["number"] == 8)
    run.open_message(8)
    check(
        page.evaluate("location.hash") == f"#/trace/{trace_id}/8",
        f"the URL did not follow the click: {page.evaluate('location.hash')}",
    )
    summary = run.detail_summary(8)
    check(summary == eight["summary"], f"detail summary {summary!r} is not {eight['summary']!r}")
    body_selector = f'{DETAIL}[data-number="8"] .body-slot'
    body = page.text_content(body_selector)
    opened_raw = False
    if "buy milk" not in body:
        # The JSON tree opens two levels; the raw view shows all of it.
        page.click(f'{DETAIL}[data-number="8"] .body-tools button')
        body = page.text_content(body_selector)
        opened_raw = True
    check("buy milk" in body, f"message 8's body does not show 'buy milk': {body[:500]!r}")
    return {
        "rows": ids,
        "title": shown_title,
        "messages": [n for n, _ in rows],
        "message_8_summary": summary,
        "body_needed_raw_view": opened_raw,
        **run.clean(),
    }


def scenario_deeplink(run):
    """`#/trace/ID/7` selects message 7 and opens its detail."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id, "deeplink needs --trace ID")
    show = run.cli_json("show", trace_id, "--json")
    seven = next(m for m in show["messages"] if m["number"] == 7)
    run.goto(f"#/trace/{trace_id}/7")
    page.wait_for_selector(f'{MESSAGE_ROW}[data-number="7"][aria-selected=true]')
    run.wait_detail(7)
    summary = run.detail_summary(7)
    check(summary == seven["summary"], f"detail summary {summary!r} is not {seven['summary']!r}")
    selected = page.eval_on_selector_all(
        f"{MESSAGE_ROW}[aria-selected=true]", "els => els.map(e => Number(e.dataset.number))"
    )
    check(selected == [7], f"selected rows: {selected}")
    return {"selected": selected, "summary": summary, **run.clean()}


def scenario_search(run):
    """Typing "buy milk" and Enter lists the hits of the buy-milk trace, as `tracer search` has them."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id, "search needs --trace ID")
    run.goto()
    page.wait_for_selector(ROW)
    page.fill("[data-testid=search]", "buy milk")
    page.press("[data-testid=search]", "Enter")
    page.wait_for_selector("[data-testid=search-hit]")
    hits = page.eval_on_selector_all(
        "[data-testid=search-hit]", "els => els.map(e => [e.dataset.id, Number(e.dataset.number)])"
    )
    ours = sorted(n for i, n in hits if i == trace_id)
    check(ours, f"no hit for {trace_id}: {hits}")
    result = {"hits": hits, "trace_hits": ours}
    if run.args.db and run.args.tracer:
        cli = run.cli_json("search", "buy milk", "--json")
        cli_ours = sorted(
            m["number"] for t in cli["traces"] if t["id"] == trace_id for m in t.get("messages", [])
        )
        check(ours == cli_ours, f"the page's hits {ours} are not `tracer search`'s {cli_ours}")
        result["cli_trace_hits"] = cli_ours
    return {**result, **run.clean()}


def scenario_hostile(run):
    """Every message of the hostile trace opened: payloads shown as text, nothing run or loaded."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id, "hostile needs --trace ID")
    run.goto()
    page.wait_for_selector(f'{ROW}[data-id="{trace_id}"]')
    list_text = page.text_content(f'{ROW}[data-id="{trace_id}"]')
    run.open_trace_from_list(trace_id)
    title = page.text_content("[data-testid=trace-title]")
    numbers = [n for n, _ in run.message_rows()]
    check(numbers, "the hostile trace shows no message")
    texts = [list_text, title]
    for number in numbers:
        texts.append(run.open_message(number))
        # A JSON body's raw view is text too: opened, so its strings are all in the DOM.
        raw = page.query_selector(f'{DETAIL}[data-number="{number}"] .body-tools button')
        if raw is not None:
            raw.click()
            texts.append(page.text_content(f'{DETAIL}[data-number="{number}"] .body-slot'))
    everything = "\n".join(texts)
    missing = [t for t in HOSTILE_TEXTS + ESCAPES if t not in everything]
    check(not missing, f"payloads not shown as text: {missing}")
    # Nowhere as they are: not in any text the page shows, nor in a tooltip or label.
    shown_now = page.evaluate(
        "() => [document.body.textContent, ...[...document.querySelectorAll('[title], [aria-label]')]"
        ".flatMap(e => [e.getAttribute('title') || '', e.getAttribute('aria-label') || ''])].join('\\n')"
    )
    raw = sorted({f"U+{ord(c):04X}" for c in everything + shown_now if unsafe(c)})
    check(not raw, f"control or bidi characters shown as they are: {raw}")
    # Nothing the trace carries became an element: no image, no frame, no extra script, no link
    # off the page, no textarea, no inline handler.
    elements = page.evaluate(
        """() => ({
          img: document.querySelectorAll('img').length,
          iframe: document.querySelectorAll('iframe, object, embed').length,
          textarea: document.querySelectorAll('textarea').length,
          scripts: [...document.scripts].map(s => s.getAttribute('src')),
          off_page_links: [...document.querySelectorAll('[href]')].map(a => a.getAttribute('href'))
            .filter(h => !(h.startsWith('#') || (h.startsWith('/') && !h.startsWith('//')) || h.startsWith('data:'))),
          handlers: [...document.querySelectorAll('*')].filter(el => [...el.attributes].some(a => a.name.startsWith('on'))).length,
          longest_text: Math.max(...[...document.querySelectorAll('pre, .jt-str')].map(e => e.textContent.length), 0),
        })"""
    )
    check(elements["img"] == 0, f"an image element: {elements}")
    check(elements["iframe"] == 0, f"a frame element: {elements}")
    check(elements["textarea"] == 0, f"a textarea element: {elements}")
    check(elements["scripts"] == ["/app.js"], f"scripts: {elements['scripts']}")
    check(not elements["off_page_links"], f"links off the page: {elements['off_page_links']}")
    check(elements["handlers"] == 0, f"inline handlers: {elements}")
    page.wait_for_timeout(500)  # an <img onerror> or a fetch would have fired by now
    if run.args.shots:
        Path(run.args.shots).mkdir(parents=True, exist_ok=True)
        run.open_message(1)
        page.screenshot(path=str(Path(run.args.shots) / "ui-hostile.png"))
    clean = run.clean()
    return {
        "messages": numbers,
        "title": title,
        "shown": [t for t in HOSTILE_TEXTS if t in everything],
        "escapes": [t for t in ESCAPES if t in everything],
        "elements": elements,
        **clean,
    }


def scenario_live(run):
    """A trace imported while the list is open gets its row within 5 s, without a reload."""
    page = run.page
    run.goto()
    page.wait_for_selector(ROW)
    run.wait_live()
    run.mark_page()
    before = run.row_ids()
    new_id = run.import_file()
    imported = time.monotonic()
    page.wait_for_selector(f'{ROW}[data-id="{new_id}"]', timeout=15000)
    seconds = time.monotonic() - imported
    check(run.not_reloaded(), "the page reloaded")
    check(seconds <= 5.0, f"the new row took {seconds:.2f} s (more than 5)")
    after = run.row_ids()
    check(set(after) == set(before) | {new_id}, f"rows before {before}, after {after}")
    return {"new_id": new_id, "row_seconds": round(seconds, 3), "rows": after, **run.clean()}


WATCH_LIVE = """() => {
  window.__liveStates = [];
  const el = document.getElementById('live');
  const note = () => window.__liveStates.push([performance.now(), el.dataset.state]);
  note();
  new MutationObserver(note).observe(el, { attributes: true, attributeFilter: ['data-state'] });
}"""


def scenario_reconnect(run):
    """The server restarts on its port: the page says so, is live again within 10 s, and a trace
    imported after the restart gets its row without a reload."""
    page = run.page
    run.goto()
    page.wait_for_selector(ROW)
    run.wait_live()
    run.mark_page()
    page.evaluate(WATCH_LIVE)
    say("READY")
    wait_line("the server's restart")
    restarted = time.monotonic()
    # Live again after having been away (a state other than live noted since READY).
    page.wait_for_function(
        "() => { const s = window.__liveStates; const away = s.findIndex(x => x[1] !== 'live');"
        " return away >= 0 && s.slice(away).some(x => x[1] === 'live')"
        " && document.getElementById('live').dataset.state === 'live'; }",
        timeout=20000,
    )
    seconds = time.monotonic() - restarted
    states = [s for _, s in page.evaluate("window.__liveStates")]
    check(seconds <= 10.0, f"live again only after {seconds:.2f} s")
    check(run.not_reloaded(), "the page reloaded")
    result = {"live_again_seconds": round(seconds, 3), "states": states}
    if run.args.import_file:
        new_id = run.import_file()
        imported = time.monotonic()
        page.wait_for_selector(f'{ROW}[data-id="{new_id}"]', timeout=15000)
        row_seconds = time.monotonic() - imported
        check(run.not_reloaded(), "the page reloaded")
        check(row_seconds <= 5.0, f"the new row took {row_seconds:.2f} s")
        result.update({"new_id": new_id, "row_seconds": round(row_seconds, 3)})
    # While the server was away its event stream could not connect: the browser says so.
    return {**result, **run.clean(allow_console=("/api/events", "ERR_CONNECTION_REFUSED"))}


STRIP = "#now-streaming"


def strip_text(page):
    return page.evaluate(
        "() => { const s = document.querySelector('#now-streaming');"
        " return s.hidden ? '' : s.textContent; }"
    )


def strip_items(page):
    return page.eval_on_selector_all(f"{STRIP} .strip-item", "els => els.map(e => e.textContent)")


def scenario_streaming(run):
    """A proxy's --ui page at the trace list: the "now streaming" strip shows the first half of an
    answer while the upstream holds the rest, then the same item grows (its newest text shown);
    then the trace's row."""
    page = run.page
    first = run.args.first_half
    rest = run.args.second_half
    run.goto()
    run.wait_live()
    run.mark_page()
    say("READY")
    wait_line("the request being sent")
    page.wait_for_function(
        "t => { const s = document.querySelector('#now-streaming');"
        " return !s.hidden && s.textContent.includes(t); }",
        arg=first,
    )
    seen = strip_text(page)
    items = strip_items(page)
    check(rest not in seen, f"the strip shows the rest before it was sent: {seen!r}")
    check("data:" not in seen, f"the strip shows the stream's framing, not its words: {seen!r}")
    check(len(items) == 1, f"{len(items)} items in the strip: {items!r}")
    if run.args.shots:
        Path(run.args.shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(run.args.shots) / "ui-streaming.png"))
    say("SEEN " + json.dumps({"strip": seen}))
    wait_line("the upstream's release")
    page.wait_for_function(
        "t => document.querySelector('#now-streaming').textContent.includes(t)", arg=rest
    )
    grown = strip_text(page)
    grown_items = strip_items(page)
    check(len(grown_items) == 1, f"the answer grew into {len(grown_items)} items: {grown_items!r}")
    hop = items[0].split(" ")[0]
    check(grown_items[0].startswith(hop + " "), f"another hop's item: {items!r} then {grown_items!r}")
    result = {"first": seen, "grown": grown, "hop": hop}
    if run.args.title:
        page.wait_for_function(
            "t => [...document.querySelectorAll('[data-testid=trace-row] .c-title a')]"
            ".some(a => a.textContent === t)",
            arg=run.args.title,
        )
        result["row_title"] = run.args.title
    check(run.not_reloaded(), "the page reloaded")
    result["events"] = [t for t, _ in page.evaluate("window.__events")]
    return {**result, **run.clean()}


def scenario_screens(run):
    """Screenshots of the list, a trace and an open message, 1280x800."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id and run.args.shots, "screens needs --trace ID and --shots DIR")
    shots = Path(run.args.shots)
    shots.mkdir(parents=True, exist_ok=True)
    run.goto()
    page.wait_for_selector(ROW)
    run.wait_live()
    page.screenshot(path=str(shots / "ui-list.png"))
    run.open_trace_from_list(trace_id)
    page.screenshot(path=str(shots / "ui-trace.png"))
    run.open_message(5)
    page.screenshot(path=str(shots / "ui-message.png"))
    names = ["ui-list.png", "ui-trace.png", "ui-message.png"]
    return {"shots": [str(shots / n) for n in names], **run.clean()}


SCENARIOS = {
    "reads": scenario_reads,
    "deeplink": scenario_deeplink,
    "search": scenario_search,
    "hostile": scenario_hostile,
    "live": scenario_live,
    "reconnect": scenario_reconnect,
    "streaming": scenario_streaming,
    "screens": scenario_screens,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--chromium", required=True, help="the Chromium to drive")
    parser.add_argument("--db")
    parser.add_argument("--tracer")
    parser.add_argument("--trace", help="the trace the scenario opens")
    parser.add_argument("--import", dest="import_file", help="a hop log to import while the page is open")
    parser.add_argument("--shots", help="where screens writes its PNGs")
    parser.add_argument("--title", help="streaming: the title of the trace whose row must appear")
    parser.add_argument("--first-half", default="Added buy ")
    parser.add_argument("--second-half", default="milk.")
    args = parser.parse_args()

    outcome = {"scenario": args.scenario}
    started = time.monotonic()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=LAUNCH_ARGS)
            try:
                context = browser.new_context(viewport=VIEWPORT)
                context.add_init_script(INIT_SCRIPT)
                page = context.new_page()
                run = Run(args, page)
                try:
                    outcome.update(SCENARIOS[args.scenario](run))
                except Exception:
                    outcome["console_errors"] = run.console_errors
                    outcome["page_errors"] = run.page_errors
                    try:
                        outcome["events"] = page.evaluate("window.__events || []")[-20:]
                        outcome["live"] = page.evaluate(
                            "(document.getElementById('live') || {}).textContent")
                    except PlaywrightError:
                        pass
                    raise
            finally:
                browser.close()
    except (Failure, PlaywrightError, subprocess.SubprocessError, OSError, KeyError) as error:
        outcome.update({"ok": False, "error": f"{type(error).__name__}: {error}"})
        outcome["run_seconds"] = round(time.monotonic() - started, 2)
        say(json.dumps(outcome))
        print(f"ui_browser.py {args.scenario}: {error}", file=sys.stderr)
        sys.exit(1)
    outcome.update({"ok": True, "run_seconds": round(time.monotonic() - started, 2)})
    say(json.dumps(outcome))


if __name__ == "__main__":
    main()
