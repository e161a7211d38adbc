#!/usr/bin/env python3
"""Runs one real agent under `tracer run`, offline: the scripted upstream served over TLS (a
test CA's certificate for the agent's real API host), the notes server configured as a stdio MCP
server in the agent's own config file in a throwaway HOME, and `tracer run --resolve HOST:443=…
--upstream-ca CA -- AGENT "Add buy milk to my notes"`. With --netns (root) inside `unshare --net`.
With --kill-after-first-request, tracer is killed with SIGKILL once the upstream saw a request.
With --interactive (Claude Code), the agent's own screen runs in tmux: the prompt is typed, the
answer awaited, `/exit` typed; the screen is kept in the summary.

Writes WORK/summary.json: tracer's exit code, output tails, the notes file, the config files'
bytes before and after (hex SHA-256), the database, the upstream's request log."""

import argparse
import hashlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agent_setups import FAKE_KEY, PROMPT, QUIET_ENV, write  # noqa: E402
from run_agent import read_url  # noqa: E402

HOSTS = {"claude": "api.anthropic.com", "codex": "api.openai.com",
         "gemini": "generativelanguage.googleapis.com", "opencode": "api.openai.com",
         "qwen": "api.openai.com"}


def setup(agent, bin_dir, home, project, notes_cmd):
    """(command, env, config files) with the notes server as a stdio server in the agent's own file."""
    command, args = notes_cmd[0], notes_cmd[1:]
    if agent == "claude":
        # The project's .mcp.json, approved in its .claude/settings.json (~/.claude.json is
        # Claude Code's own state file: it rewrites it on every run).
        path = os.path.join(project, ".mcp.json")
        write(path, json.dumps({"mcpServers": {"notes": {"type": "stdio", "command": command, "args": args}}},
                               indent=2))
        approval = os.path.join(project, ".claude", "settings.json")
        write(approval, json.dumps({"enabledMcpjsonServers": ["notes"]}))
        # On the first-party API host Claude Code defers MCP tools behind ToolSearch.
        env = {"ANTHROPIC_API_KEY": "sk-ant-test-fake-key-0000000000000000", "ENABLE_TOOL_SEARCH": "false",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_ENABLE_TELEMETRY": "0"}
        return ([os.path.join(bin_dir, "claude"), "-p", PROMPT, "--allowedTools", "mcp__notes__append",
                 "--output-format", "json"], env, [path, approval])
    if agent == "codex":
        path = os.path.join(home, ".codex", "config.toml")
        write(path, f"""model = "gpt-5-codex"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.scripted]
name = "scripted"
base_url = "https://api.openai.com/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[mcp_servers.notes]
command = {json.dumps(command)}
args = {json.dumps(args)}
default_tools_approval_mode = "approve"
""")
        env = {"SCRIPTED_API_KEY": FAKE_KEY, "CODEX_HOME": os.path.join(home, ".codex")}
        return [os.path.join(bin_dir, "codex"), "exec", "--skip-git-repo-check", PROMPT], env, [path]
    if agent == "gemini":
        path = os.path.join(home, ".gemini", "settings.json")
        write(path, json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {"notes": {"command": command, "args": args}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            # The current names: Gemini CLI rewrites a file with the old ones (disableAutoUpdate).
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}, indent=2))
        env = {"GEMINI_API_KEY": "test-fake-gemini-key", "GEMINI_CLI_NO_RELAUNCH": "true",
               "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        return [os.path.join(bin_dir, "gemini"), "-p", PROMPT, "--yolo"], env, [path]
    if agent == "opencode":
        path = os.path.join(home, ".config", "opencode", "opencode.json")
        write(path, json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": "https://api.openai.com/v1", "apiKey": FAKE_KEY},
                "models": {"scripted-model": {"name": "Scripted model", "tool_call": True}}}},
            "model": "scripted/scripted-model",
            "mcp": {"notes": {"type": "local", "command": [command, *args]}},
            "autoupdate": False, "share": "disabled"}, indent=2))
        env = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
               "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1"}
        return [os.path.join(bin_dir, "opencode"), "run", "--auto", PROMPT], env, [path]
    if agent == "qwen":
        path = os.path.join(home, ".qwen", "settings.json")
        write(path, json.dumps({
            "mcpServers": {"notes": {"command": command, "args": args}},
            "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
            # `$version`: Qwen Code adds it to a settings file that lacks it.
            "general": {"enableAutoUpdate": False}, "$version": 4}, indent=2))
        return ([os.path.join(bin_dir, "qwen"), "--auth-type", "openai", "--openai-base-url",
                 "https://api.openai.com/v1", "--openai-api-key", FAKE_KEY, "-m", "scripted-model",
                 "--yolo", "-p", PROMPT], {}, [path])
    raise SystemExit(f"unknown agent {agent}")


def stdio_tools_listed(db):
    """Whether a wrapped stdio server has answered tools/list in the run's database."""
    if not os.path.exists(db):
        return False
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            row = conn.execute(
                "SELECT count(*) FROM hops WHERE transport = 'stdio' AND state = 'complete'"
                " AND CAST(request_body AS TEXT) LIKE '%tools/list%'").fetchone()
            return row[0] > 0
    except sqlite3.Error:
        return False


def interactive(args, work, project, env, tracer, command, notes):
    """Runs tracer run of the agent's interactive screen in tmux; returns (exit code, screen)."""
    socket = os.path.join(work, "tmux.sock")
    state = os.path.join(env["HOME"], ".claude.json")
    key = "sk-ant-test-fake-key-0000000000000000"
    write(state, json.dumps({"hasCompletedOnboarding": True,
                             "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
                             "projects": {project: {"hasTrustDialogAccepted": True}}}))
    argv = [a for a in command if a not in ("-p", PROMPT, "--output-format", "json")]
    script = os.path.join(work, "interactive.sh")
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if k != "TERM")
    tracer_argv = [a for a in tracer[: tracer.index("--")] if a != "--json"] + ["--", *argv]
    write(script, f"{exports}export TERM=xterm-256color\ncd {shlex.quote(project)}\n"
                  f"{' '.join(shlex.quote(a) for a in tracer_argv)}\necho TRACER-EXIT-$?\nsleep 600\n")

    def tmux(*more):
        return subprocess.run(["tmux", "-S", socket, *more], capture_output=True, text=True).stdout

    def screen():
        return tmux("capture-pane", "-p", "-t", "run", "-S", "-300")

    def wait(predicate, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if predicate():
                return True
            time.sleep(0.2)
        return False

    tmux("new-session", "-d", "-s", "run", "-x", "160", "-y", "50", f"sh {shlex.quote(script)}")
    try:
        wait(lambda: "for shortcuts" in screen(), 60)
        # Claude Code's screen takes a prompt before its MCP servers are connected; a prompt
        # typed earlier goes out without their tools. Wait for the wrapped server's tool list.
        wait(lambda: stdio_tools_listed(os.path.join(work, "tracer.db")), 60)
        tmux("send-keys", "-t", "run", "-l", PROMPT)
        time.sleep(0.5)
        tmux("send-keys", "-t", "run", "Enter")
        wait(lambda: os.path.exists(notes) and "buy milk" in open(notes).read(), args.timeout)
        wait(lambda: "Done" in screen(), 30)
        time.sleep(1)
        tmux("send-keys", "-t", "run", "-l", "/exit")
        time.sleep(0.5)
        tmux("send-keys", "-t", "run", "Enter")
        wait(lambda: "TRACER-EXIT-" in screen(), 60)
        shown = screen()
    finally:
        tmux("kill-server")
    marker = shown.split("TRACER-EXIT-", 1)
    code = int(marker[1].split()[0]) if len(marker) == 2 else None
    return code, shown


def tree_digest(folder):
    """One SHA-256 over every file's path and bytes under folder (symlinks by their target)."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            h.update(os.path.relpath(path, folder).encode())
            h.update(os.readlink(path).encode() if os.path.islink(path) else open(path, "rb").read())
    return h.hexdigest()


def lines_in(path):
    return sum(1 for _ in open(path, "rb")) if os.path.exists(path) else 0


def run_forks(args, db, project, env, upstream_log):
    """After the run, with the upstream still up: `tracer fork` of its trace at --fork-at, first
    as asked (refused when a host-run tool comes before N), then with --sandbox."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT id FROM traces WHERE title LIKE '%buy milk%' ORDER BY started_unix_ns"
                           " LIMIT 1").fetchone()
    if row is None:
        return {"error": "no buy-milk trace"}
    trace = row[0]
    out = []
    for extra in ([], ["--sandbox"]):
        before = {"project": tree_digest(project), "upstream_requests": lines_in(upstream_log)}
        argv = [args.tracer, "--db", db, "fork", trace, "--at", str(args.fork_at), "--yes", *extra]
        done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=args.timeout)
        out.append({"argv": argv[3:], "exit_code": done.returncode,
                    "stdout": done.stdout.decode(errors="replace")[-8000:],
                    "stderr": done.stderr.decode(errors="replace")[-8000:], "before": before,
                    "after": {"project": tree_digest(project), "upstream_requests": lines_in(upstream_log)}})
    return {"trace": trace, "runs": out}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run(args):
    work = os.path.abspath(args.work)
    home, project, logs = (os.path.join(work, d) for d in ("home", "project", "logs"))
    for d in (home, project, logs, os.path.join(work, "tmp")):
        os.makedirs(d, exist_ok=True)
    deadline = time.time() + 60
    upstream_log = os.path.join(work, "upstream-requests.jsonl")
    shell_first = ["--shell-first", "--request-id-header"] if args.shell_first else []
    upstream = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "scripted_upstream.py"), "--log", upstream_log,
         "--tls-cert", args.tls_cert, "--tls-key", args.tls_key, *shell_first],
        stdout=subprocess.PIPE, stderr=open(os.path.join(logs, "upstream.err"), "wb"))
    try:
        port = read_url(upstream.stdout, deadline, "https://").rsplit(":", 1)[1]
        notes = os.path.join(work, "notes.txt")
        bin_dir = os.path.join(args.agents_dir, args.agent, "node_modules", ".bin")
        command, agent_env, configs = setup(args.agent, bin_dir, home, project,
                                            [args.notes_server, "--stdio", "--file", notes])
        if args.shell_first and args.agent == "claude":
            command[command.index("--allowedTools") + 1] = "mcp__notes__append,Bash(echo:*)"
        user_otlp = None
        if args.user_otlp_dump:
            # The user's own collector: tracer must pass the agent's telemetry on to it.
            user_otlp = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "otlp_dump.py"), "--out", args.user_otlp_dump],
                stdout=subprocess.PIPE, stderr=open(os.path.join(logs, "user-otlp.err"), "wb"))
            agent_env["OTEL_EXPORTER_OTLP_ENDPOINT"] = read_url(user_otlp.stdout, deadline, "http://")
        before = {p: digest(p) for p in configs}
        db = os.path.join(work, "tracer.db")
        host = HOSTS[args.agent]
        tracer = [args.tracer, "run", "--db", db, "--no-redact", "--ca-dir", os.path.join(work, "ca"),
                  "--upstream-ca", args.upstream_ca, "--resolve", f"{host}:443=127.0.0.1:{port}",
                  "--json", "--", *command]
        node = os.path.dirname(shutil.which("node") or "/usr/bin/node")
        env = {"PATH": f"{bin_dir}:{node}:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
               "USER": "tester", "SHELL": "/bin/sh", "TMPDIR": os.path.join(work, "tmp"),
               **QUIET_ENV, **agent_env}
        started = time.time()
        if args.interactive:
            code, screen = interactive(args, work, project, env, tracer, command, notes)
            killed, timed_out = False, code is None
        else:
            screen = None
        with open(os.path.join(logs, "tracer.out"), "wb") as out, \
                open(os.path.join(logs, "tracer.err"), "wb") as err:
            process = subprocess.Popen(["true"] if args.interactive else tracer, cwd=project, env=env,
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                       start_new_session=True)
            if not args.interactive:
                killed, timed_out = False, False
            try:
                if args.kill_after_first_request:
                    while time.time() - started < args.timeout and process.poll() is None:
                        if os.path.exists(upstream_log) and os.path.getsize(upstream_log) > 0:
                            process.send_signal(signal.SIGKILL)
                            killed = True
                            break
                        time.sleep(0.05)
                waited = process.wait(args.timeout)
                if not args.interactive:
                    code = waited
            except subprocess.TimeoutExpired:
                timed_out = True
                code = None
            # Whatever tracer left (the agent after a SIGKILL of tracer, its servers) goes too.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        seconds = time.time() - started
        scratch_left = [n for n in os.listdir(os.path.join(work, "tmp")) if n.startswith("tracer-run-")]
        forks = run_forks(args, db, project, env, upstream_log) if args.fork_at else None
    finally:
        upstream.terminate()
        upstream.wait(10)
        if args.user_otlp_dump and user_otlp is not None:
            user_otlp.terminate()
            user_otlp.wait(10)

    def tail(name, size=6000):
        with open(os.path.join(logs, name), "rb") as f:
            return f.read()[-size:].decode(errors="replace")
    summary = {
        "agent": args.agent, "command": tracer, "exit_code": code, "killed": killed,
        "timed_out": timed_out, "seconds": round(seconds, 2), "stdout": tail("tracer.out"),
        "stderr": tail("tracer.err"),
        "notes": open(notes, encoding="utf-8").read() if os.path.exists(notes) else None,
        "configs_before": before, "configs_after": {p: digest(p) for p in configs},
        "scratch_left": scratch_left, "db": db, "upstream_log": upstream_log, "screen": screen,
        "forks": forks,
    }
    with open(os.path.join(work, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, choices=sorted(HOSTS))
    parser.add_argument("--agents-dir", required=True)
    parser.add_argument("--tracer", required=True)
    parser.add_argument("--notes-server", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    parser.add_argument("--upstream-ca", required=True)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--kill-after-first-request", action="store_true")
    parser.add_argument("--netns", action="store_true")
    parser.add_argument("--interactive", action="store_true", help="Claude Code's own screen, in tmux")
    parser.add_argument("--shell-first", action="store_true",
                        help="the model asks for a shell `echo hello` first (Claude Code: Bash allowed)")
    parser.add_argument("--user-otlp-dump", help="a user's own OTLP collector (otlp_dump.py) writing here")
    parser.add_argument("--fork-at", type=int, help="then `tracer fork` the trace at this message")
    args = parser.parse_args()
    for name in ("agents_dir", "tracer", "notes_server", "tls_cert", "tls_key", "upstream_ca"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if args.netns:
        argv = [a for a in sys.argv[1:] if a != "--netns"]
        inner = " ".join(shlex.quote(x) for x in [sys.executable, os.path.abspath(__file__), *argv])
        os.execvp("unshare", ["unshare", "--net", "sh", "-c", f"ip link set lo up && exec {inner}"])
    run(args)


if __name__ == "__main__":
    main()
