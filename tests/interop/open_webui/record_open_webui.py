#!/usr/bin/env python3
"""Records the article's open-webui + mcpo + phonebook system through tracer, once, for
tests/fixtures/open-webui/ (issue 30). Starts, each on 127.0.0.1:

- the scripted upstream (Ollama's `/api/…`, tests/interop/agents/scripted_ollama.py),
- the FastMCP phonebook (../mcpo_phonebook_server.py, in the mcpo venv: mcp 1.x),
- mcpo with a config naming `phonebook` (Streamable HTTP, through tracer's `mcp:phonebook` route),
- `tracer proxy --no-redact` with routes `agent:open-webui`, `model:ollama`, `other:mcpo`,
  `mcp:phonebook`,
- `open-webui serve` (OFFLINE_MODE, DATA_DIR in the work folder, Ollama at tracer's model route),

then drives open-webui as a user would, through its agent route: signup, signin, `/api/models`,
the tool-server config (mcpo's phonebook through tracer's `other:mcpo` route), and
`POST /api/chat/completions` with `tool_ids: ["server:phonebook"]` in native then legacy
function calling. Stops everything (tracer with SIGINT) and leaves tracer's database in WORK.

Usage: record_open_webui.py --tracer target/debug/tracer --owui-venv /work/venv-owui
       --mcpo-venv /work/venv-mcpo --work /tmp/owui-run"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
AGENTS = os.path.join(os.path.dirname(HERE), "agents")
QUESTION = "What is the phone number of Ashley Johnson?"
PASSWORD = "test-fake-password-0000"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"nothing listens on {port} after {seconds} s")


def call(method, url, body=None, token=None, timeout=120):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as err:
        text, status = err.read().decode(), err.code
    print(f"{method} {url} -> {status} {text[:300]!r}", flush=True)
    return status, text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracer", required=True)
    parser.add_argument("--owui-venv", required=True)
    parser.add_argument("--mcpo-venv", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    args.tracer = os.path.abspath(args.tracer)
    os.makedirs(work, exist_ok=True)
    ports = {name: free_port() for name in
             ("upstream", "phonebook", "mcpo", "owui", "t_agent", "t_model", "t_mcpo", "t_phonebook")}
    children = []

    def start(name, argv, env=None):
        log = open(os.path.join(work, f"{name}.log"), "w")
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
        children.append((name, child))
        return child

    try:
        start("upstream", [sys.executable, os.path.join(AGENTS, "scripted_upstream.py"),
                           "--port", str(ports["upstream"]), "--log", os.path.join(work, "upstream.jsonl")])
        start("phonebook", [os.path.join(args.mcpo_venv, "bin", "python"),
                            os.path.join(HERE, "..", "mcpo_phonebook_server.py"), "--port", str(ports["phonebook"])])
        t = lambda name: f"127.0.0.1:{ports[name]}"  # noqa: E731
        start("tracer", [args.tracer, "--db", os.path.join(work, "tracer.db"), "proxy", "--no-redact",
                         "--route", f"agent:open-webui={t('t_agent')}=http://{t('owui')}",
                         "--route", f"model:ollama={t('t_model')}=http://{t('upstream')}",
                         "--route", f"other:mcpo={t('t_mcpo')}=http://{t('mcpo')}",
                         "--route", f"mcp:phonebook={t('t_phonebook')}=http://{t('phonebook')}"])
        for name in ("upstream", "phonebook", "t_agent", "t_model", "t_mcpo", "t_phonebook"):
            wait_port(ports[name], 30)
        config = {"mcpServers": {"phonebook": {"type": "streamable-http",
                                               "url": f"http://{t('t_phonebook')}/mcp"}}}
        with open(os.path.join(work, "mcpo.json"), "w") as f:
            json.dump(config, f)
        start("mcpo", [os.path.join(args.mcpo_venv, "bin", "mcpo"), "--host", "127.0.0.1",
                       "--port", str(ports["mcpo"]), "--config", os.path.join(work, "mcpo.json")])
        wait_port(ports["mcpo"], 60)
        env = dict(os.environ)
        env.update({
            "DATA_DIR": os.path.join(work, "owui-data"), "OFFLINE_MODE": "true", "HF_HUB_OFFLINE": "1",
            "WEBUI_AUTH": "true", "WEBUI_SECRET_KEY": "test-fake-webui-secret",
            "ENABLE_OLLAMA_API": "true", "OLLAMA_BASE_URL": f"http://{t('t_model')}",
            "ENABLE_OPENAI_API": "false", "ENABLE_VERSION_UPDATE_CHECK": "false",
            "ENABLE_WEBSOCKET_SUPPORT": "false", "ENABLE_TITLE_GENERATION": "false",
            "ENABLE_FOLLOW_UP_GENERATION": "false", "ENABLE_TAGS_GENERATION": "false",
            "ENABLE_AUTOCOMPLETE_GENERATION": "false", "BYPASS_EMBEDDING_AND_RETRIEVAL": "true",
            "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "false", "ANONYMIZED_TELEMETRY": "false",
            "SCARF_NO_ANALYTICS": "true", "DO_NOT_TRACK": "true",
        })
        os.makedirs(env["DATA_DIR"], exist_ok=True)
        start("open-webui", [os.path.join(args.owui_venv, "bin", "open-webui"), "serve",
                             "--host", "127.0.0.1", "--port", str(ports["owui"])], env=env)
        wait_port(ports["owui"], 600)
        drive(f"http://{t('t_agent')}", f"http://{t('t_mcpo')}")
        time.sleep(1.0)
    finally:
        for name, child in reversed(children):
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
                try:
                    child.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    child.kill()
    with open(os.path.join(work, "ports.json"), "w") as f:
        json.dump(ports, f, indent=1)


def drive(owui, mcpo):
    user = {"name": "Test User", "email": "user@example.com", "password": PASSWORD}
    status, text = call("POST", f"{owui}/api/v1/auths/signup", user)
    if status != 200:
        raise SystemExit("signup failed")
    status, text = call("POST", f"{owui}/api/v1/auths/signin",
                        {"email": user["email"], "password": PASSWORD})
    token = json.loads(text)["token"]
    call("GET", f"{owui}/api/models", token=token)
    connection = {"url": f"{mcpo}/phonebook", "path": "openapi.json", "type": "openapi",
                  "auth_type": "none", "key": "", "config": {"enable": True},
                  "info": {"id": "phonebook", "name": "phonebook", "description": "The article's phonebook"}}
    call("POST", f"{owui}/api/v1/configs/tool_servers", {"TOOL_SERVER_CONNECTIONS": [connection]}, token=token)
    call("GET", f"{owui}/api/v1/tools/", token=token)
    for mode in ("native", "legacy"):
        time.sleep(1.5)
        body = {"model": "scripted-llama:latest", "stream": True,
                "messages": [{"role": "user", "content": QUESTION}],
                "tool_ids": ["server:phonebook"], "params": {"function_calling": mode}}
        if mode == "native":
            # A new chat with a message id (as the web UI sends): open-webui runs the model's
            # tool calls itself, in the background, and saves the answer to the chat.
            body.update({"parent_id": None, "id": str(uuid.uuid4())})
        call("POST", f"{owui}/api/chat/completions", body, token=token, timeout=300)
        time.sleep(6)


if __name__ == "__main__":
    main()
