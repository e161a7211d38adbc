#!/usr/bin/env python3
"""docs/architecture.md checked against the code: the arrows it draws are the code's, and what it names exists.

The code's arrows are read from the code itself: each crate's `tracer_*` names in its `src/` (doc
comments included: a crate's docs name other crates by their Rust name only when it uses them), each
app module's `crate::<module>` names, and each crate's `[dependencies]` (`cargo metadata`). The page's
arrows are read from its Mermaid flowchart, its floor stack (the `text` block with `→`), its crate
table (the `may use` column) and its app table. Every arrow drawn must exist, and none may be
missing. Then every file path and every Rust name the page puts in backticks must exist in the
tree; on a line marked `<!-- check at merge -->` (a move in flight) what is missing is listed, not
an error. Run from anywhere in the checkout: python3 scripts/check_architecture.py
"""
import importlib.util
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
APP = "tracer"
PENDING = "<!-- check at merge -->"
CRATE_NAME = re.compile(r"\btracer_(wire|serve|store|trace|live|record|export|reference|web)\b")
# Backticked words that are not Rust names of this tree (SQL, HTTP, names of other programs).
NOT_RUST = {"COMMIT", "GET", "POST", "DELETE", "BEGIN", "include_str!", "println!", "format!"}
# Backticked words with a slash that are not files of the tree (an MCP method, build output).
NOT_PATHS = re.compile(r"^(tools/list|tools/call|target/.*)$")


def floors():
    spec = importlib.util.spec_from_file_location("check_layers", os.path.join(ROOT, "scripts", "check_layers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: level for level, names in enumerate(module.FLOORS) for name in names}


def rust_files(top):
    for base, _, files in os.walk(top):
        for name in files:
            if name.endswith(".rs"):
                yield os.path.join(base, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def crates_named(paths, own):
    named = set()
    for path in paths:
        named |= {"tracer-" + m for m in CRATE_NAME.findall(read(path))}
    named.discard(own)
    return named


def code_graph(meta):
    """crate -> (declared tracer deps, tracer crates its src/ names)."""
    members = {p["name"]: p for p in meta["packages"]}
    graph = {}
    for name, package in members.items():
        declared = {d["name"] for d in package["dependencies"] if d["kind"] is None and d["name"] in members}
        src = os.path.join(os.path.dirname(package["manifest_path"]), "src")
        graph[name] = (declared, crates_named(rust_files(src), name))
    return graph


def short(name):
    return name if name == APP else name.removeprefix("tracer-")


def long(word):
    return APP if word == APP else "tracer-" + word


def doc_blocks(text, lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def mermaid_edges(text):
    block = doc_blocks(text, "mermaid")[0]
    labels = {m[0]: m[1].split()[0] for m in re.findall(r'^\s*(\w+)\["([^"]+)"\]', block, re.M)}
    return {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", block, re.M)}


def stack_edges(text):
    edges, levels = set(), {}
    level = None
    for line in doc_blocks(text, "text")[0].splitlines():
        m = re.match(r"^(?:floor (\d+))?\s+(tracer[\w-]*)\s+→\s*(.*)$", line)
        if not m:
            continue
        if m.group(1) is not None:
            level = int(m.group(1))
        name, uses = m.group(2), m.group(3)
        levels[name] = level
        if not uses.startswith("("):
            edges |= {(name, long(w.strip())) for w in uses.split(",")}
    return edges, levels


def table_rows(text, first_header):
    """Rows (as cell lists) of the table whose header starts with `| first_header |`."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith(f"| {first_header} |"):
            inside, header = True, [c.strip() for c in line.strip("|").split("|")]
            continue
        if inside:
            if not line.startswith("|"):
                break
            if line.startswith("| ---"):
                continue
            rows.append(dict(zip(header, (c.strip() for c in line.strip().strip("|").split(" | ")))))
    return rows


def compare(what, drawn, code, errors):
    for edge in sorted(drawn - code):
        errors.append(f"{what}: draws {edge[0]} → {edge[1]}, which the code does not have")
    for edge in sorted(code - drawn):
        errors.append(f"{what}: misses {edge[0]} → {edge[1]}, which the code has")


def app_modules():
    lib = read(os.path.join(ROOT, "src", "lib.rs"))
    return re.findall(r"^pub mod (\w+);", lib, re.M)


def app_graph(modules):
    graph = {}
    for module in modules:
        paths = [os.path.join(ROOT, "src", module + ".rs")]
        folder = os.path.join(ROOT, "src", module)
        if os.path.isdir(folder):
            paths += list(rust_files(folder))
        crates = {short(c) for c in crates_named(paths, APP)}
        others = set()
        for path in paths:
            others |= set(re.findall(r"\bcrate::(\w+)", read(path)))
        graph[module] = (crates, (others & set(modules)) - {module})
    return graph


def tree_files():
    found = set()
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in {"target", ".git", "node_modules"} and not d.startswith(".venv")]
        rel = os.path.relpath(base, ROOT)
        rel = "" if rel == "." else rel + "/"
        found.add(rel)
        found.add(rel.rstrip("/"))
        found |= {rel + f for f in files}
    return found


def rust_names():
    names = set()
    words = set()
    for top in ("crates", "src"):
        for path in rust_files(os.path.join(ROOT, top)):
            text = read(path)
            names |= set(re.findall(r"\b(?:fn|struct|enum|trait|type|const|static|mod|macro_rules!)\s+(\w+)", text))
            names |= set(re.findall(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(\w+):\s", text, re.M))
            words |= set(re.findall(r"\b[A-Z]\w*\b", text))
            names.add(os.path.splitext(os.path.basename(path))[0])
    for name in os.listdir(os.path.join(ROOT, "scripts")):
        if name.endswith(".py"):
            names |= set(re.findall(r"^([A-Z_]+) = ", read(os.path.join(ROOT, "scripts", name)), re.M))
    return names, words


def check_names(text, errors, pending):
    files = tree_files()
    names, words = rust_names()
    path_like = re.compile(r"^[\w.<>*-]+(/[\w.<>*-]*)+$|^[\w-]+\.(rs|md|json|sql|py|toml)$")
    ident = re.compile(r"^(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)(\(\))?(!)?$")
    for number, line in enumerate(text.splitlines(), 1):
        misses = pending if PENDING in line else errors
        for token in re.findall(r"`([^`\n]+)`", line):
            if path_like.match(token) and "<" not in token and "*" not in token and not NOT_PATHS.match(token):
                tail = token.rstrip("/") + ("/" if token.endswith("/") else "")
                if token in files or any(f == tail or f.endswith("/" + tail) for f in files):
                    continue
                misses.append(f"docs/architecture.md:{number}: no file or folder `{token}`")
                continue
            m = ident.match(token)
            if not m or token in NOT_RUST:
                continue
            last, called, macro = m.group(1), m.group(2), m.group(3)
            qualified = "::" in token
            camel = last[0].isupper()
            if not (qualified or called or macro or camel):
                continue
            if last in names or (camel and last in words):
                continue
            misses.append(f"docs/architecture.md:{number}: `{token}` names nothing in crates/ or src/")


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            check=True, capture_output=True, text=True, cwd=ROOT,
        ).stdout
    )
    text = read(DOC)
    errors, pending = [], []
    graph = code_graph(meta)
    for name, (declared, used) in sorted(graph.items()):
        for dep in sorted(declared - used):
            errors.append(f"{name}: Cargo.toml lets it use {dep}, which its src/ never names")
        for dep in sorted(used - declared):
            errors.append(f"{name}: its src/ names {dep}, which its Cargo.toml does not declare")
    code = {(a, b) for a, (_, used) in graph.items() for b in used}

    compare("the flowchart", mermaid_edges(text), code, errors)
    stack, levels = stack_edges(text)
    compare("the floor stack", stack, code, errors)
    floor = floors()
    for name, level in sorted(levels.items()):
        if floor.get(name) != level:
            errors.append(f"the floor stack: {name} on floor {level}, check_layers.py says {floor.get(name)}")
    for name in sorted(set(graph) - set(levels)):
        errors.append(f"the floor stack: {name} is missing")

    crate_rows = table_rows(text, "crate")
    table = set()
    for row in crate_rows:
        name = row["crate"].strip("`")
        may = row["may use"]
        if may.startswith("all "):  # "all nine": every other crate
            uses = set(graph) - {name}
        else:
            uses = set(re.findall(r"`(tracer[\w-]*)`", may))
        table |= {(name, u) for u in uses}
        if str(floor.get(name)) != row["floor"]:
            errors.append(f"the crate table: {name} on floor {row['floor']}, check_layers.py says {floor.get(name)}")
    compare("the crate table", table, code, errors)
    for name in sorted(set(graph) - {r["crate"].strip("`") for r in crate_rows}):
        errors.append(f"the crate table: no row for {name}")

    modules = app_modules()
    apps = app_graph(modules)
    rows = {r["module"].strip("`"): r for r in table_rows(text, "module")}
    for module in modules:
        if module not in rows:
            errors.append(f"the app table: no row for `{module}` (a module of src/lib.rs)")
            continue
        crates_code, others_code = apps[module]
        cell = lambda c: set() if rows[module][c] in ("—", "") else {w.strip() for w in rows[module][c].split(",")}
        compare(f"the app table ({module} → crates)", {(module, c) for c in cell("crates it uses")},
                {(module, c) for c in crates_code}, errors)
        compare(f"the app table ({module} → app modules)", {(module, m) for m in cell("app modules it uses")},
                {(module, m) for m in others_code}, errors)
    for module in modules:
        seen, todo = set(), list(apps[module][1])
        while todo:
            other = todo.pop()
            if other == module:
                errors.append(f"the app modules: `{module}` is on a circle of `crate::` uses")
                break
            if other not in seen:
                seen.add(other)
                todo.extend(apps.get(other, (set(), set()))[1])
    for module in sorted(set(rows) - set(modules)):
        errors.append(f"the app table: `{module}` is not a module of src/lib.rs")
    bins = os.path.join(ROOT, "src", "bin")
    for path in sorted(rust_files(bins)):
        extra = crates_named([path], APP) - {"tracer-reference", "tracer-serve"}
        if extra or re.search(r"\btracer::", read(path)):
            errors.append(f"{os.path.relpath(path, ROOT)} uses more than tracer-reference and tracer-serve")

    check_names(text, errors, pending)

    for line in pending:
        print(f"architecture (check at merge): {line}")
    for line in errors:
        print(f"architecture: {line}", file=sys.stderr)
    if errors:
        return 1
    arrows = len(code)
    print(f"architecture: docs/architecture.md draws the code's {arrows} arrows between crates, "
          f"its app modules' arrows, and names only what exists ({len(pending)} to check at merge)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
