#!/usr/bin/env python3
"""Writes data/prices.json: LiteLLM's public price table cut to the chat and responses models of
the providers coding agents call, with only the price fields tracer reads.

    pip download litellm==1.110.2 --no-deps -d /tmp/litellm && cd /tmp/litellm && unzip -o -q *.whl
    python3 scripts/vendor_prices.py /tmp/litellm/litellm/model_prices_and_context_window_backup.json 1.110.2 2026-12-01
"""
import json
import re
import sys

PROVIDERS = {"anthropic", "openai", "gemini", "deepseek", "xai", "mistral", "moonshot", "zai", "dashscope"}
PRICE = re.compile(
    r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|"
    r"cache_creation_input_token_cost|output_cost_per_reasoning_token)"
    r"(_above_1hr)?(_above_\d+k_tokens)?(_above_1hr)?$"
)


def main(source, version, as_of):
    table = json.load(open(source))
    out = {
        "_source": {
            "name": "LiteLLM model_prices_and_context_window.json",
            "package": f"litellm {version} (PyPI), litellm/model_prices_and_context_window_backup.json",
            "url": "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json",
            "licence": "MIT (LiteLLM)",
            "as_of": as_of,
            "cut": "mode chat or responses; providers " + ", ".join(sorted(PROVIDERS))
            + "; price fields only (dollars per token), batch, flex and priority prices left out",
        }
    }
    for key in sorted(table):
        entry = table[key]
        if not isinstance(entry, dict) or key == "sample_spec":
            continue
        if entry.get("mode") not in ("chat", "responses") or entry.get("litellm_provider") not in PROVIDERS:
            continue
        prices = {f: v for f, v in entry.items() if PRICE.match(f) and isinstance(v, (int, float))}
        if "input_cost_per_token" not in prices:
            continue
        if isinstance(entry.get("max_input_tokens"), int):
            prices["max_input_tokens"] = entry["max_input_tokens"]
        out[key] = prices
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
