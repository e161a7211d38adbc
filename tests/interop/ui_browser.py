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
import sys
from pathlib import Path

from ui_harness import *  # noqa: F401,F403
from ui_scenarios import *  # noqa: F401,F403


SCENARIOS = {
    "reads": scenario_reads,
    "deeplink": scenario_deeplink,
    "search": scenario_search,
    "hostile": scenario_hostile,
    "live": scenario_live,
    "reconnect": scenario_reconnect,
    "streaming": scenario_streaming,
    "screens": scenario_screens,
    "agent": scenario_agent,
    "fork": scenario_fork,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--chromium", required=True, help="the Chromium to drive")
    parser.add_argument("--db")
    parser.add_argument("--tracer")
    parser.add_argument("--trace", help="the trace the scenario opens")
    parser.add_argument("--original", help="fork: the trace the fork was made of")
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
