#!/usr/bin/env python3
"""tracer-trace's jobs, kept: no file of a job names a job above it, and lib.rs defines nothing.

Bottom first: words < read < group, and read < account < explain (an explained message carries
its tokens and cost). Reads every `crate::` path in crates/tracer-trace/src (names re-exported
at the root count as the job they come from). Run from anywhere: python3 scripts/check_trace_jobs.py
"""
import re, sys, pathlib

SRC = pathlib.Path(__file__).resolve().parent.parent / "crates/tracer-trace/src"
# Each job and the jobs it may name (itself included).
MAY_USE = {
    "words": {"words"},
    "read": {"words", "read"},
    "group": {"words", "read", "group"},
    "account": {"words", "read", "account"},
    "explain": {"words", "read", "account", "explain"},
}

def strip_comments(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)

def brace_items(text, start):
    """The top-level items of the `{...}` starting at text[start] == '{'."""
    depth, item, items = 0, "", []
    for ch in text[start:]:
        if ch == "{":
            depth += 1
            if depth == 1:
                continue
        elif ch == "}":
            depth -= 1
            if depth == 0:
                items.append(item)
                break
        if depth == 1 and ch == ",":
            items.append(item)
            item = ""
        else:
            item += ch
    return [i.strip() for i in items if i.strip()]

def named_paths(text):
    """Every `crate::first` path's first segment (expanding `crate::{a, b::c}`)."""
    for m in re.finditer(r"\bcrate::(\{|\w+)", text):
        if m.group(1) == "{":
            for item in brace_items(text, m.start(1)):
                yield re.match(r"\w+", item).group(0) if re.match(r"\w+", item) else item
        else:
            yield m.group(1)

def root_names():
    """Names re-exported or defined at the root, and the job each lives in."""
    lib = strip_comments((SRC / "lib.rs").read_text())
    names = {}
    for m in re.finditer(r"pub use (\w+)::([^;]*);", lib, flags=re.S):
        job, rest = m.group(1), m.group(2)
        for name in re.findall(r"\b([A-Za-z_]\w*)\b", rest):
            names[name] = job
    for m in re.finditer(r"^(?:pub(?:\(crate\))? )?(?:struct|enum|fn|const|static|type|trait) (\w+)", lib, flags=re.M):
        names[m.group(1)] = "lib"
    return names

def main():
    roots = root_names()
    bad = []
    for path in sorted(SRC.rglob("*.rs")):
        rel = path.relative_to(SRC)
        job = rel.parts[0].removesuffix(".rs")
        if job not in MAY_USE:
            continue
        text = strip_comments(path.read_text())
        for first in set(named_paths(text)):
            target = first if first in MAY_USE else roots.get(first)
            if target == "lib":
                bad.append(f"{rel}: names `{first}`, defined in lib.rs (which holds only modules and re-exports)")
            elif target and target not in MAY_USE[job]:
                bad.append(f"{rel}: job `{job}` names `{first}` of job `{target}`, above it")
        if re.search(r"\bsuper::super\b", text):
            bad.append(f"{rel}: `super::super` (name the job by `crate::`)")
    lib = strip_comments((SRC / "lib.rs").read_text())
    for m in re.finditer(r"^(?:pub(?:\(crate\))? )?(struct|enum|fn|impl|const|static|trait)\b", lib, flags=re.M):
        bad.append(f"lib.rs: defines a `{m.group(1)}` (it holds only modules and re-exports)")
    for line in bad:
        print(line)
    if bad:
        sys.exit(1)
    print("tracer-trace jobs: no file names a job above it")

main()
