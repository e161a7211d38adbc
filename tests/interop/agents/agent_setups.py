"""How each real agent is run offline: its config files in a throwaway HOME, its environment and
its command line ("Add buy milk to my notes", non-interactive, telemetry and updates off).
`model_url` is tracer's model route, `mcp_url` its mcp route (`…/mcp`)."""

import json
import os

PROMPT = "Add buy milk to my notes"
FAKE_KEY = "sk-test-fake-key-for-the-scripted-upstream-0000"

QUIET_ENV = {
    "DO_NOT_TRACK": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "OTEL_SDK_DISABLED": "true",
    "NO_UPDATE_NOTIFIER": "1",
    "CI": "1",
    "TERM": "dumb",
    "NO_COLOR": "1",
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def claude_code(bin_dir, home, model_url, mcp_url, work):
    mcp = os.path.join(work, "mcp.json")
    write(mcp, json.dumps({"mcpServers": {"notes": {"type": "http", "url": mcp_url}}}))
    env = {
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-fake-key-0000000000000000",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    }
    command = [os.path.join(bin_dir, "claude"), "-p", PROMPT, "--mcp-config", mcp,
               "--strict-mcp-config", "--allowedTools",
               "mcp__notes__append,Agent" if os.environ.get("SCRIPTED_SUBAGENT") else "mcp__notes__append",
               "--output-format", "json"]
    return command, env


def codex(bin_dir, home, model_url, mcp_url, work):
    config = f"""model = "gpt-5-codex"
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
base_url = "{model_url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[mcp_servers.notes]
url = "{mcp_url}"
default_tools_approval_mode = "approve"
"""
    write(os.path.join(home, ".codex", "config.toml"), config)
    env = {"SCRIPTED_API_KEY": FAKE_KEY, "CODEX_HOME": os.path.join(home, ".codex")}
    command = [os.path.join(bin_dir, "codex"), "exec", "--skip-git-repo-check", PROMPT]
    return command, env


def codex_otlp(bin_dir, home, model_url, mcp_url, work):
    """Codex with analytics on (its own metrics exporter; run it with --forward to record that)."""
    command, env = codex(bin_dir, home, model_url, mcp_url, work)
    path = os.path.join(home, ".codex", "config.toml")
    with open(path, encoding="utf-8") as f:
        config = f.read().replace("[analytics]\nenabled = false", "[analytics]\nenabled = true")
    write(path, config)
    return command, env


def codex_websocket(bin_dir, home, model_url, mcp_url, work):
    """Codex with the Responses API over a WebSocket (`supports_websockets = true`)."""
    command, env = codex(bin_dir, home, model_url, mcp_url, work)
    path = os.path.join(home, ".codex", "config.toml")
    with open(path, encoding="utf-8") as f:
        config = f.read().replace('env_key = "SCRIPTED_API_KEY"\n',
                                  'env_key = "SCRIPTED_API_KEY"\nsupports_websockets = true\n')
    write(path, config)
    return command, env


def gemini_cli(bin_dir, home, model_url, mcp_url, work):
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"notes": {"httpUrl": mcp_url}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    write(os.path.join(home, ".gemini", "settings.json"), json.dumps(settings, indent=2))
    env = {"GEMINI_API_KEY": "test-fake-gemini-key", "GOOGLE_GEMINI_BASE_URL": model_url,
           "GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    command = [os.path.join(bin_dir, "gemini"), "-p", PROMPT, "--yolo"]
    return command, env


def gemini_cli_code_assist(bin_dir, home, model_url, mcp_url, work):
    """Gemini CLI as after a Google sign-in: the Code Assist API (`/v1internal:…`) at tracer's
    model route, an access token from the environment (GOOGLE_GENAI_USE_GCA), no OAuth flow."""
    command, env = gemini_cli(bin_dir, home, model_url, mcp_url, work)
    settings_path = os.path.join(home, ".gemini", "settings.json")
    with open(settings_path, encoding="utf-8") as f:
        settings = json.load(f)
    settings["security"]["auth"]["selectedType"] = "oauth-personal"
    write(settings_path, json.dumps(settings, indent=2))
    del env["GEMINI_API_KEY"], env["GOOGLE_GEMINI_BASE_URL"]
    env.update({"GOOGLE_GENAI_USE_GCA": "true", "GOOGLE_CLOUD_ACCESS_TOKEN": "ya29.fake-access-token",
                "CODE_ASSIST_ENDPOINT": model_url, "GOOGLE_CLOUD_PROJECT": "scripted-project"})
    return command, env


def gemini_json_array(bin_dir, home, model_url, mcp_url, work):
    """Not an agent: Gemini CLI's recorded turn 1 and 2 requests sent to `:streamGenerateContent`
    without `alt=sse`, so the upstream answers with the JSON-array stream."""
    fixtures = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "agents", "gemini-cli")
    command = ["python3", os.path.join(os.path.dirname(__file__), "post_recorded.py"), model_url,
               "/v1beta/models/gemini-3.8-flash:streamGenerateContent", os.path.join(fixtures, "hops.json"),
               os.path.join(fixtures, "turn1_request.json"), os.path.join(fixtures, "turn2_request.json")]
    return command, {}


def opencode(bin_dir, home, model_url, mcp_url, work):
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
            "options": {"baseURL": f"{model_url}/v1", "apiKey": FAKE_KEY},
            "models": {"scripted-model": {"name": "Scripted model", "tool_call": True}}}},
        "model": "scripted/scripted-model",
        "mcp": {"notes": {"type": "remote", "url": mcp_url}},
        "autoupdate": False,
        "share": "disabled",
    }
    path = os.path.join(work, "opencode.json")
    write(path, json.dumps(config, indent=2))
    env = {"OPENCODE_CONFIG": path, "OPENCODE_DISABLE_MODELS_FETCH": "1",
           "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
           "OPENCODE_DISABLE_SHARE": "1"}
    command = [os.path.join(bin_dir, "opencode"), "run", "--auto", PROMPT]
    return command, env


def qwen_code(bin_dir, home, model_url, mcp_url, work):
    settings = {
        "mcpServers": {"notes": {"httpUrl": mcp_url}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "usageStatisticsEnabled": False,
    }
    write(os.path.join(home, ".qwen", "settings.json"), json.dumps(settings, indent=2))
    env = {"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": f"{model_url}/v1", "OPENAI_MODEL": "scripted-model"}
    command = [os.path.join(bin_dir, "qwen"), "--auth-type", "openai", "--openai-base-url",
               f"{model_url}/v1", "--openai-api-key", FAKE_KEY, "-m", "scripted-model", "--yolo",
               "-p", PROMPT]
    return command, env


# ---------------------------------------------------------------- the agents' own OTLP telemetry
# For `run_agent.py --otlp-dump DIR`: each agent exports its OpenTelemetry logs, metrics and traces
# over OTLP/HTTP to otlp_dump.py (its address in OTLP_DUMP_URL). A None value removes a variable of
# QUIET_ENV (DISABLE_TELEMETRY, OTEL_SDK_DISABLED); DO_NOT_TRACK and
# CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC stay (they do not switch these exporters off).


def otlp_url():
    return os.environ["OTLP_DUMP_URL"]


def claude_code_otlp_env(protocol):
    return {
        "DISABLE_TELEMETRY": None, "OTEL_SDK_DISABLED": None,
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "otlp", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_url(),
        "OTEL_LOG_USER_PROMPTS": "1", "OTEL_LOG_TOOL_DETAILS": "1",
        "OTEL_LOGS_EXPORT_INTERVAL": "1000", "OTEL_METRIC_EXPORT_INTERVAL": "2000",
        "OTEL_TRACES_EXPORT_INTERVAL": "1000",
    }


def claude_code_otlp(bin_dir, home, model_url, mcp_url, work, protocol="http/protobuf"):
    """Claude Code with its OTLP logs, metrics and (beta) traces on; also allowed to run `Bash(echo:*)`
    (the upstream's --shell-first asks for `echo hello` before the append)."""
    command, env = claude_code(bin_dir, home, model_url, mcp_url, work)
    command[command.index("--allowedTools") + 1] = "mcp__notes__append,Bash(echo:*)"
    env.update(claude_code_otlp_env(protocol))
    return command, env


def claude_code_otlp_json(bin_dir, home, model_url, mcp_url, work):
    return claude_code_otlp(bin_dir, home, model_url, mcp_url, work, "http/json")


def claude_code_raw_bodies(bin_dir, home, model_url, mcp_url, work):
    """claude_code_otlp_json plus `OTEL_LOG_RAW_API_BODIES=file:WORK/raw-bodies`: Claude Code writes
    each Messages request body (`<uuid>.request.json`) and each assembled response
    (`<request-id>.response.json`) into that folder, and logs `api_request_body` /
    `api_response_body` events (with `body_ref`) over OTLP. Its session transcript stays under
    HOME/.claude/projects/."""
    command, env = claude_code_otlp(bin_dir, home, model_url, mcp_url, work, "http/json")
    env["OTEL_LOG_RAW_API_BODIES"] = "file:" + os.path.join(work, "raw-bodies")
    return command, env


def claude_code_raw_bodies_subagent(bin_dir, home, model_url, mcp_url, work):
    """claude_code_raw_bodies with the Agent tool allowed instead of Bash (upstream --subagent)."""
    command, env = claude_code_raw_bodies(bin_dir, home, model_url, mcp_url, work)
    command[command.index("--allowedTools") + 1] = "mcp__notes__append,Agent"
    return command, env


def codex_otel(bin_dir, home, model_url, mcp_url, work, protocol="binary"):
    """Codex with `[otel]` exporting logs, traces and metrics over OTLP/HTTP (endpoints are full
    per-signal URLs; Codex does not append /v1/<signal>)."""
    command, env = codex(bin_dir, home, model_url, mcp_url, work)
    url = otlp_url()
    otel = "\n[otel]\nenvironment = \"tracer-fixture\"\nlog_user_prompt = true\n" + "".join(
        f'{key} = {{ otlp-http = {{ endpoint = "{url}/v1/{signal}", protocol = "{protocol}" }} }}\n'
        for key, signal in (("exporter", "logs"), ("trace_exporter", "traces"), ("metrics_exporter", "metrics")))
    path = os.path.join(home, ".codex", "config.toml")
    with open(path, "a", encoding="utf-8") as f:
        f.write(otel)
    env.update({"DISABLE_TELEMETRY": None, "OTEL_SDK_DISABLED": None})
    return command, env


def gemini_cli_otlp(bin_dir, home, model_url, mcp_url, work):
    """Gemini CLI with settings `telemetry` on, target local, OTLP over HTTP (its http exporters
    send OTLP/JSON; protobuf only over gRPC), prompts logged, traces on."""
    command, env = gemini_cli(bin_dir, home, model_url, mcp_url, work)
    path = os.path.join(home, ".gemini", "settings.json")
    with open(path, encoding="utf-8") as f:
        settings = json.load(f)
    settings["telemetry"] = {"enabled": True, "target": "local", "otlpEndpoint": otlp_url(),
                             "otlpProtocol": "http", "logPrompts": True, "traces": True}
    write(path, json.dumps(settings, indent=2))
    env.update({"DISABLE_TELEMETRY": None, "OTEL_SDK_DISABLED": None})
    return command, env


def gemini_cli_code_assist_otlp(bin_dir, home, model_url, mcp_url, work):
    """gemini_cli_otlp over the Code Assist API (its requests carry session_id and user_prompt_id)."""
    command, env = gemini_cli_code_assist(bin_dir, home, model_url, mcp_url, work)
    path = os.path.join(home, ".gemini", "settings.json")
    with open(path, encoding="utf-8") as f:
        settings = json.load(f)
    settings["telemetry"] = {"enabled": True, "target": "local", "otlpEndpoint": otlp_url(),
                             "otlpProtocol": "http", "logPrompts": True, "traces": True}
    write(path, json.dumps(settings, indent=2))
    env.update({"DISABLE_TELEMETRY": None, "OTEL_SDK_DISABLED": None})
    return command, env


AGENTS = {
    "claude-code": ("claude", claude_code),
    "claude-code-otlp": ("claude", claude_code_otlp),
    "claude-code-otlp-json": ("claude", claude_code_otlp_json),
    "claude-code-raw-bodies": ("claude", claude_code_raw_bodies),
    "claude-code-raw-bodies-subagent": ("claude", claude_code_raw_bodies_subagent),
    "codex": ("codex", codex),
    "codex-otlp": ("codex", codex_otlp),
    "codex-otel": ("codex", codex_otel),
    "codex-websocket": ("codex", codex_websocket),
    "gemini-cli": ("gemini", gemini_cli),
    "gemini-cli-code-assist": ("gemini", gemini_cli_code_assist),
    "gemini-cli-otlp": ("gemini", gemini_cli_otlp),
    "gemini-cli-code-assist-otlp": ("gemini", gemini_cli_code_assist_otlp),
    "gemini-json-array": ("gemini", gemini_json_array),
    "opencode": ("opencode", opencode),
    "qwen-code": ("qwen", qwen_code),
}
