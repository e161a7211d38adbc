"""What every scenario of ui_browser.py shares: Chromium launched as the tests want it, a run's
record of console errors, policy violations, dialogs and requests, and the checks."""

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
