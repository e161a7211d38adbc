#!/usr/bin/env python3
"""Records sample-traces/agents/: real coding agents from npm (target/agents, as scripts/test
installs them) asked "Add buy milk to my notes" against the scripted upstream, with notes-server
as their MCP server, through `tracer proxy` with its redaction on (run_agent.py --redact), offline
(inside `unshare --net` when that works). Each sample is the hop log of the trace that holds the
`tools/call` (`tracer export ID --format json`), checked for the fake keys the agents were given.

    python3 tests/interop/agents/record_agent_samples.py --tracer target/debug/tracer \\
        --notes-server target/debug/notes-server [--only claude-code-subagent] [--out DIR]"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
from agent_setups import FAKE_KEY  # noqa: E402

# file name: (run_agent.py setup, extra environment, scripted_upstream.py arguments)
SAMPLES = {
    "claude-code-subagent": ("claude-code", {"SCRIPTED_SUBAGENT": "1"}, ["--subagent"]),
    "codex-websocket": ("codex-websocket", {}, []),
    "gemini-cli": ("gemini-cli", {}, []),
    "opencode": ("opencode", {}, []),
}

# What the agents were given as keys (agent_setups.py): none may be left in a sample.
SECRETS = [FAKE_KEY, "sk-ant-test-fake-key", "test-fake-gemini-key", "ya29."]


def netns_available():
    try:
        return subprocess.run(["unshare", "--net", "sh", "-c", "ip link set lo up"],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def tracer_json(tracer, db, *args):
    out = subprocess.run([tracer, "--db", db, *args, "--json"], check=True, capture_output=True)
    return json.loads(out.stdout)


def tool_trace(tracer, db):
    """The id of the trace whose messages hold the `tools/call`."""
    for trace in tracer_json(tracer, db, "ls"):
        log = tracer_json(tracer, db, "show", trace["id"])
        if any(m["case"] == "mcp_tool_call" for m in log["messages"]):
            return trace["id"]
    raise RuntimeError(f"no trace in {db} holds the tools/call")


def record(name, args, netns):
    setup, env, upstream = SAMPLES[name]
    work = tempfile.mkdtemp(prefix=f"sample-{name}-")
    command = [sys.executable, os.path.join(HERE, "run_agent.py"), "--agent", setup,
               "--agents-dir", args.agents_dir, "--tracer", args.tracer,
               "--notes-server", args.notes_server, "--work", work, "--redact",
               *(f"--upstream-arg={a}" for a in upstream), *(["--netns"] if netns else [])]
    started = time.time()
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, **env},
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(work, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    if summary["exit_code"] != 0 or summary["notes"] != "buy milk\n":
        raise RuntimeError(f"{name}: the agent did not add the note: {json.dumps(summary, indent=2)}")
    db = os.path.join(work, "tracer.db")
    out = os.path.join(args.out, f"{name}.json")
    subprocess.run([args.tracer, "--db", db, "export", tool_trace(args.tracer, db), "--format",
                    "json", "-o", out], check=True, capture_output=True)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    left = [s for s in SECRETS if s in text]
    if left:
        os.remove(out)
        raise RuntimeError(f"{name}: a key the agent was given is in the sample: {left}")
    seconds = time.time() - started
    print(f"{out}: {os.path.getsize(out)} bytes, recorded in {seconds:.1f} s "
          f"(the agent ran {summary['seconds']} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracer", required=True)
    parser.add_argument("--notes-server", required=True)
    parser.add_argument("--agents-dir", default=os.path.join(ROOT, "target", "agents"))
    parser.add_argument("--out", default=os.path.join(ROOT, "sample-traces", "agents"))
    parser.add_argument("--only", action="append", choices=sorted(SAMPLES))
    args = parser.parse_args()
    args.tracer, args.notes_server, args.agents_dir, args.out = (
        os.path.abspath(p) for p in (args.tracer, args.notes_server, args.agents_dir, args.out))
    os.makedirs(args.out, exist_ok=True)
    netns = netns_available()
    if not netns:
        print("no `unshare --net` here: the agents run on this network, telemetry off")
    for name in args.only or SAMPLES:
        record(name, args, netns)


if __name__ == "__main__":
    main()
