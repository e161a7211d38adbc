"""The scenarios of ui_browser.py, one function each, over a `Run` (ui_harness.py)."""

import json
import subprocess
import time
from pathlib import Path

from ui_harness import *  # noqa: F401,F403 (the checks, the selectors, Run)


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
    # Message 8 is the second model request: what changed since request 4, as show --changes says.
    changes = f'{DETAIL}[data-number="8"] .changes-slot'
    page.wait_for_function(
        "sel => (document.querySelector(sel) || {}).textContent?.includes('changes since the previous request (request 4)')",
        arg=changes,
    )
    changes_text = page.text_content(changes)
    cli_changes = subprocess.run(
        [run.args.tracer, "--db", run.args.db, "show", trace_id, "--changes"],
        capture_output=True, text=True, check=True,
    ).stdout
    first_change = next(
        line.strip() for line in cli_changes.split("request 8 against request 4:")[1].splitlines() if line.strip()
    )
    check(first_change in changes_text, f"the page's changes miss {first_change!r}: {changes_text!r}")
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
    """The server restarts on its port: the page says so, is live again (the times are reported,
    not judged: a loaded machine decides them), and a trace imported after the restart gets its
    row without a reload."""
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
    check(run.not_reloaded(), "the page reloaded")
    result = {"live_again_seconds": round(seconds, 3), "states": states}
    if run.args.import_file:
        new_id = run.import_file()
        imported = time.monotonic()
        page.wait_for_selector(f'{ROW}[data-id="{new_id}"]', timeout=15000)
        row_seconds = time.monotonic() - imported
        check(run.not_reloaded(), "the page reloaded")
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


def scenario_agent(run):
    """The agent's own events are rows among the messages, each right after the message
    `show --json` places it after (before the first when it follows none), as text."""
    page = run.page
    trace_id = run.args.trace
    check(trace_id, "agent needs --trace ID")
    show = run.cli_json("show", trace_id, "--json")
    events = [e for e in show.get("agent_events", []) if e["signal"] == "log"]
    check(events, "show --json placed no agent events")
    run.goto(f"#/trace/{trace_id}")
    page.wait_for_selector("[data-testid=agent-row]")
    rows = page.eval_on_selector_all(
        ".tab-body .panel:not([hidden]) [data-testid=message-row], "
        ".tab-body .panel:not([hidden]) [data-testid=agent-row]",
        "els => els.map(e => [e.getBoundingClientRect().top, e.dataset.testid,"
        " e.dataset.number ? Number(e.dataset.number) : null,"
        " (e.querySelector('.m-summary') || e).textContent])"
        ".sort((a, b) => a[0] - b[0])",
    )
    last = None
    seen = []
    for _, kind, number, text in rows:
        if kind == "message-row":
            last = number
            continue
        after = [e["sentence"] for e in events if e.get("after_message") == last]
        check(text in after, f"agent row {text!r} after message {last} is not one show places there: {after}")
        seen.append([last, text])
    check(seen, f"no agent rows among {rows}")
    return {"agent_rows": seen, **run.clean()}


def scenario_fork(run):
    """A fork's row is badged with its original; its page names the edit; "fork from here" under
    a message builds the `tracer fork` command from what is typed."""
    page = run.page
    fork_id, original = run.args.trace, run.args.original
    check(fork_id and original, "fork needs --trace FORK and --original ID")
    run.goto()
    page.wait_for_selector(f"[data-testid=trace-row][data-id='{fork_id}'] [data-testid=fork-badge]")
    badge = page.text_content(f"[data-testid=trace-row][data-id='{fork_id}'] [data-testid=fork-badge]")
    others = page.eval_on_selector_all(
        f"[data-testid=trace-row]:not([data-id='{fork_id}']) [data-testid=fork-badge]", "els => els.length")
    run.goto(f"#/trace/{fork_id}")
    page.wait_for_selector("[data-testid=fork-line]")
    line = page.text_content("[data-testid=fork-line]")
    run.goto(f"#/trace/{original}/7")
    page.wait_for_selector("[data-testid=fork-here]")
    page.click("[data-testid=fork-here] summary")
    page.fill("[data-testid=fork-returns]", "disk's full")
    page.check("[data-testid=fork-fails]")
    page.fill("[data-testid=fork-model]", "qwen3:8b")
    command = page.text_content("[data-testid=fork-command]")
    shots = []
    if run.args.shots:
        Path(run.args.shots).mkdir(parents=True, exist_ok=True)
        shot = Path(run.args.shots) / "ui-fork.png"
        page.screenshot(path=str(shot))
        shots.append(str(shot))
    return {"shots": shots, "badge": badge, "other_badges": others, "line": line, "command": command, **run.clean()}


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
