#!/usr/bin/env python3
"""Runs one real agent through tracer, offline: the scripted upstream, notes-server, `tracer proxy`
(a model route in front of the upstream, an mcp route in front of notes-server) and the agent
("Add buy milk to my notes") in a throwaway HOME. With --netns (root, `unshare` present) all of it
runs inside a fresh network namespace with only loopback up.

Writes WORK/summary.json (and prints it): the agent's exit code, run time, output tails, the notes
file, the database, the upstream's request log. Used by the Rust interop test and, with
pick_fixtures.py, to record tests/fixtures/agents/."""

import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agent_setups import AGENTS, QUIET_ENV  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, deadline):
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def read_url(stream, deadline, marker="http://"):
    while time.time() < deadline:
        line = stream.readline()
        if not line:
            break
        line = line.decode(errors="replace")
        if marker in line:
            start = line.index(marker)
            return line[start:].split()[0].rstrip("/")
    raise RuntimeError("no address reported")


def drain(stream, path):
    """Copies what is left of a child's pipe into a file, in the background."""
    import threading

    def copy():
        with open(path, "ab") as out:
            for chunk in iter(lambda: stream.read(4096), b""):
                out.write(chunk)
    threading.Thread(target=copy, daemon=True).start()


def stop(process, sig=signal.SIGTERM, grace=10):
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run(args):
    work = os.path.abspath(args.work)
    home, project = os.path.join(work, "home"), os.path.join(work, "project")
    for d in (home, project, os.path.join(work, "logs")):
        os.makedirs(d, exist_ok=True)
    logs = os.path.join(work, "logs")
    deadline = time.time() + 60
    upstream_log = os.path.join(work, "upstream-requests.jsonl")
    tls = upstream_pki(work, args.model_host) if args.model_host else []
    upstream = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "scripted_upstream.py"), "--log", upstream_log]
        + tls + args.upstream_arg, stdout=subprocess.PIPE, stderr=open(os.path.join(logs, "upstream.err"), "wb"))
    helpers = [(upstream, signal.SIGTERM)]
    try:
        run_with(args, work, home, project, logs, deadline, upstream, upstream_log, helpers)
    finally:  # a run that failed half-way leaves nothing running (stop() skips the stopped)
        for process, sig in reversed(helpers):
            stop(process, sig, 40)


def upstream_pki(work, host):
    """A CA and a certificate for `host` (openssl), for the scripted upstream served over TLS."""
    pki = os.path.join(work, "upstream-pki")
    os.makedirs(pki, exist_ok=True)
    ca_key, ca, key, csr, cert, ext = (os.path.join(pki, n) for n in
                                       ("ca.key", "ca.pem", "leaf.key", "leaf.csr", "leaf.pem", "leaf.ext"))
    with open(ext, "w", encoding="utf-8") as f:
        f.write(f"subjectAltName=DNS:{host}\nbasicConstraints=CA:FALSE\n")
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=scripted upstream test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", f"/CN={host}")
    run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
        "-days", "2", "-extfile", ext)
    return ["--tls-cert", cert, "--tls-key", key]


def run_with(args, work, home, project, logs, deadline, upstream, upstream_log, helpers):
    upstream_url = read_url(upstream.stdout, deadline, "https://" if args.model_host else "http://")
    if args.model_host:
        # The agent asks https://MODEL_HOST through the forward proxy, which decrypts it and
        # forwards it, over TLS it verifies, to the upstream (--resolve, --upstream-ca).
        port = upstream_url.rsplit(":", 1)[1]
        pins = ["--resolve", f"{args.model_host}:443=127.0.0.1:{port}",
                "--upstream-ca", os.path.join(work, "upstream-pki", "ca.pem")]
        upstream_url = "http://127.0.0.1:9"
    else:
        pins = []
    notes = os.path.join(work, "notes.txt")
    notes_server = subprocess.Popen(
        [args.notes_server, "--listen", "127.0.0.1:0", "--file", notes],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    helpers.append((notes_server, signal.SIGTERM))
    notes_url = read_url(notes_server.stderr, deadline)
    drain(notes_server.stderr, os.path.join(logs, "notes-server.err"))
    model_port, mcp_port = free_port(), free_port()
    db = os.path.join(work, "tracer.db")
    forward, proxy_env = [], {}
    if args.forward:
        ca_dir = os.path.join(work, "ca")
        lines = subprocess.run([args.tracer, "ca", "--env", "--ca-dir", ca_dir], check=True,
                               capture_output=True, text=True).stdout
        for line in lines.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            proxy_env[name] = value.strip("'")
        forward_port = free_port()
        forward = ["--forward", f"127.0.0.1:{forward_port}", "--ca-dir", ca_dir]
        proxy_url = f"http://127.0.0.1:{forward_port}"
        proxy_env.update({"HTTPS_PROXY": proxy_url, "HTTP_PROXY": proxy_url, "https_proxy": proxy_url,
                          "http_proxy": proxy_url, "NO_PROXY": "127.0.0.1,localhost",
                          "no_proxy": "127.0.0.1,localhost"})
    tracer = subprocess.Popen(
        [args.tracer, "proxy", "--db", db, *([] if args.redact else ["--no-redact"]), *forward, *pins,
         "--route", f"model=127.0.0.1:{model_port}={upstream_url}",
         "--route", f"mcp:notes=127.0.0.1:{mcp_port}={notes_url.removesuffix('/mcp')}"],
        stdout=open(os.path.join(logs, "tracer.out"), "wb"),
        stderr=open(os.path.join(logs, "tracer.err"), "wb"))
    helpers.append((tracer, signal.SIGINT))
    if not (wait_port(model_port, deadline) and wait_port(mcp_port, deadline)):
        raise RuntimeError("tracer proxy did not listen")
    if args.otlp_dump:
        # An OTLP/HTTP dump receiver (otlp_dump.py) for the agent's own telemetry; the *-otlp
        # setups read its address from OTLP_DUMP_URL.
        dump = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "otlp_dump.py"), "--out", os.path.abspath(args.otlp_dump)],
            stdout=subprocess.PIPE, stderr=open(os.path.join(logs, "otlp-dump.err"), "wb"))
        helpers.append((dump, signal.SIGTERM))
        os.environ["OTLP_DUMP_URL"] = read_url(dump.stdout, deadline)
    bin_name, setup = AGENTS[args.agent]
    bin_dir = os.path.join(args.agents_dir, bin_name, "node_modules", ".bin")
    model_url, mcp_url = f"http://127.0.0.1:{model_port}", f"http://127.0.0.1:{mcp_port}/mcp"
    if args.model_host:
        model_url = f"https://{args.model_host}"
    command, agent_env = setup(bin_dir, home, model_url, mcp_url, work)
    env = {"PATH": f"{bin_dir}:{os.path.dirname(shutil.which('node') or '/usr/bin/node')}:/usr/bin:/bin",
           "HOME": home, "LANG": "C.UTF-8", "USER": "tester", "SHELL": "/bin/sh",
           "XDG_CONFIG_HOME": os.path.join(home, ".config"), "XDG_DATA_HOME": os.path.join(home, ".local/share"),
           "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_STATE_HOME": os.path.join(home, ".local/state"),
           "TMPDIR": os.path.join(work, "tmp"), **QUIET_ENV, **proxy_env, **agent_env}
    env = {k: v for k, v in env.items() if v is not None}  # a setup's None removes a variable
    os.makedirs(env["TMPDIR"], exist_ok=True)
    started = time.time()
    timed_out = False
    codes = []
    # --runs N: the same command N times back to back (new processes), --gap seconds apart.
    for index in range(args.runs):
        if index:
            time.sleep(args.gap)
        with open(os.path.join(logs, "agent.out"), "ab") as out, open(os.path.join(logs, "agent.err"), "ab") as err:
            agent = subprocess.Popen(command, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=True)
            try:
                codes.append(agent.wait(args.timeout))
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(agent.pid, signal.SIGKILL)
                codes.append(agent.wait())
    code = next((c for c in codes if c != 0), 0)
    seconds = time.time() - started
    time.sleep(args.settle)
    stop(tracer, signal.SIGINT, 40)
    stop(notes_server)
    stop(upstream)
    if args.otlp_dump:
        stop(dump)

    def tail(name, size=4000):
        with open(os.path.join(logs, name), "rb") as f:
            return f.read()[-size:].decode(errors="replace")
    summary = {
        "agent": args.agent, "command": command, "env": agent_env, "exit_code": code,
        "exit_codes": codes,
        "timed_out": timed_out, "seconds": round(seconds, 2),
        "stdout": tail("agent.out"), "stderr": tail("agent.err"),
        "notes": open(notes, encoding="utf-8").read() if os.path.exists(notes) else None,
        "db": db, "upstream_log": upstream_log, "tracer_exit": tracer.returncode,
        "tracer_stderr": tail("tracer.err", 2000),
    }
    with open(os.path.join(work, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, choices=sorted(AGENTS))
    parser.add_argument("--agents-dir", required=True, help="DIR/<bin>/node_modules/.bin/<bin>")
    parser.add_argument("--tracer", required=True)
    parser.add_argument("--notes-server", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds before stopping tracer")
    parser.add_argument("--netns", action="store_true", help="run inside unshare --net (root)")
    parser.add_argument("--forward", action="store_true",
                        help="also tracer's forward proxy (HTTPS_PROXY, its CA trusted) for what the agent sends elsewhere")
    parser.add_argument("--redact", action="store_true",
                        help="record with tracer's redaction on (the default of `tracer proxy`; tests keep everything)")
    parser.add_argument("--runs", type=int, default=1, help="run the agent this many times, back to back")
    parser.add_argument("--gap", type=float, default=1.5, help="seconds between runs")
    parser.add_argument("--model-host", help="with --forward: serve the upstream over TLS as this host; the "
                        "agent reaches it at https://HOST through HTTPS_PROXY (decrypted by tracer)")
    parser.add_argument("--otlp-dump", metavar="DIR",
                        help="run otlp_dump.py and save the agent's OTLP requests in DIR (the *-otlp agents)")
    parser.add_argument("--upstream-arg", action="append", default=[],
                        help="passed to scripted_upstream.py, e.g. --upstream-arg=--encoding=gzip")
    args = parser.parse_args()
    args.agents_dir, args.tracer, args.notes_server = (
        os.path.abspath(p) for p in (args.agents_dir, args.tracer, args.notes_server))
    if args.netns:
        argv = [a for a in sys.argv[1:] if a != "--netns"]
        inner = " ".join(shlex.quote(x) for x in [sys.executable, os.path.abspath(__file__), *argv])
        os.execvp("unshare", ["unshare", "--net", "sh", "-c", f"ip link set lo up && exec {inner}"])
    run(args)


if __name__ == "__main__":
    main()
