"""Drives notes-agent's OpenAI-compatible front with the official OpenAI Python SDK.

Usage: openai_client.py BASE_URL  (e.g. http://127.0.0.1:8081/v1)

Lists the models, asks for one completion whole and one streamed, checks what the SDK parsed,
and prints a JSON summary on stdout for the Rust test that runs it. Exits 1 on a failed check.
"""

import json
import sys

import openai
from openai import OpenAI


def main() -> int:
    base_url = sys.argv[1]
    client = OpenAI(base_url=base_url, api_key="sk-local", max_retries=0, timeout=30)
    summary = {"openai_version": openai.__version__}

    models = client.models.list()
    summary["models"] = [m.id for m in models.data]

    plain = client.chat.completions.create(
        model=summary["models"][0],
        messages=[
            {"role": "system", "content": "ignored by the agent"},
            {"role": "user", "content": "Add buy milk to my notes"},
        ],
    )
    choice = plain.choices[0]
    summary["plain"] = {
        "content": choice.message.content,
        "finish_reason": choice.finish_reason,
        "role": choice.message.role,
        "total_tokens": plain.usage.total_tokens if plain.usage else None,
    }

    stream = client.chat.completions.create(
        model=summary["models"][0],
        messages=[{"role": "user", "content": "Add buy eggs to my notes"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, finish, ids, usage = [], None, set(), None
    for chunk in stream:
        ids.add(chunk.id)
        if chunk.usage is not None:
            usage = chunk.usage.total_tokens
        for c in chunk.choices:
            if c.delta.content:
                pieces.append(c.delta.content)
            if c.finish_reason:
                finish = c.finish_reason
    summary["stream"] = {
        "content": "".join(pieces),
        "chunks_with_text": len(pieces),
        "finish_reason": finish,
        "ids": len(ids),
        "total_tokens": usage,
    }

    try:
        client.chat.completions.create(model="m", messages=[{"role": "system", "content": "x"}])
        summary["bad_request"] = None
    except openai.BadRequestError as error:
        summary["bad_request"] = {"status": error.status_code, "message": error.message}

    print(json.dumps(summary))
    ok = (
        summary["plain"]["content"].endswith("Tools used: append")
        and summary["stream"]["content"].endswith("Tools used: append")
        and summary["stream"]["finish_reason"] == "stop"
        and summary["stream"]["ids"] == 1
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
