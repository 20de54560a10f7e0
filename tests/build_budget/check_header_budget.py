#!/usr/bin/env python3
"""Fails when a heavy header is reached from more source files than its recorded budget.

Each heavy header below costs seconds of compile time in every translation unit that reaches it
(docs/build-times.md has the measured figures). This check follows the project's own `#include "…"`
lines from every .cpp file of the build (tests and benchmarks included), and counts, per heavy
header, the .cpp files that reach it directly or through project headers. It needs no build and
no clock: the same tree always gives the same counts.

    check_header_budget.py            compare with header_budget.txt; exit 1 over a budget
    check_header_budget.py --list H   print the .cpp files that reach heavy header H
    check_header_budget.py --record   rewrite header_budget.txt with today's counts

A budget is a ceiling: a count below it passes (lower the budget with --record to lock a gain in).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUDGET_FILE = pathlib.Path(__file__).with_name("header_budget.txt")
SOURCE_DIRS = ("base", "engine", "db", "sandbox", "service", "api", "daemon", "cli", "tests",
               "bench")

# name -> the system include paths (prefixes) that bring the heavy header in.
HEAVY = {
    "beast": ("boost/beast",),
    "asio": ("boost/asio",),
    "eigen": ("Eigen/", "unsupported/Eigen/"),
    "nlohmann_json": ("nlohmann/json.hpp",),  # the full header; json_fwd.hpp is light
    "onednn": ("oneapi/dnnl/", "dnnl.hpp", "dnnl.h"),
    "spdlog": ("spdlog/",),
    "cli11": ("CLI/",),
    "gtest": ("gtest/", "gmock/"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources():
    for top in SOURCE_DIRS:
        for f in sorted((ROOT / top).rglob("*")):
            if f.suffix in (".cpp", ".h") and f.is_file():
                yield f.relative_to(ROOT).as_posix()


def scan(files):
    """file -> (project headers it includes, heavy names it includes directly)."""
    graph = {}
    for rel in files:
        text = (ROOT / rel).read_text(errors="replace")
        local, heavy = [], set()
        for kind, path in INCLUDE.findall(text):
            if kind == '"':
                # Project includes are written from the root ("api/router.h").
                if (ROOT / path).is_file():
                    local.append(path)
                continue
            for name, prefixes in HEAVY.items():
                if path.startswith(prefixes):
                    heavy.add(name)
        graph[rel] = (local, heavy)
    return graph


def reached(graph):
    """.cpp file -> the heavy names it reaches through any chain of project includes."""
    memo = {}

    def visit(rel, stack):
        if rel in memo:
            return memo[rel]
        if rel in stack or rel not in graph:  # an include cycle or a file outside the scan
            return set()
        stack.add(rel)
        local, heavy = graph[rel]
        result = set(heavy)
        for dep in local:
            result |= visit(dep, stack)
        stack.discard(rel)
        memo[rel] = result
        return result

    return {rel: visit(rel, set()) for rel in graph if rel.endswith(".cpp")}


def counts(reach):
    return {name: sum(1 for r in reach.values() if name in r) for name in HEAVY}


def read_budget():
    budget = {}
    for line in BUDGET_FILE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, value = line.split()
            budget[name] = int(value)
    return budget


def main(argv):
    reach = reached(scan(list(sources())))
    now = counts(reach)
    if len(argv) == 2 and argv[0] == "--list":
        for rel in sorted(r for r, names in reach.items() if argv[1] in names):
            print(rel)
        return 0
    if argv == ["--record"]:
        lines = ["# heavy header -> most .cpp files that may reach it (tests/build_budget/"
                 "check_header_budget.py)"]
        lines += [f"{name} {now[name]}" for name in HEAVY]
        BUDGET_FILE.write_text("\n".join(lines) + "\n")
        print(f"recorded {BUDGET_FILE.relative_to(ROOT)}")
        return 0
    budget = read_budget()
    failed = False
    print(f"{'header':<14} {'.cpp files':>10} {'budget':>7}")
    for name in HEAVY:
        limit = budget.get(name)
        over = limit is None or now[name] > limit
        failed |= over
        mark = "  OVER: see --list " + name if over else ""
        print(f"{name:<14} {now[name]:>10} {str(limit):>7}{mark}")
    print(f"{len(reach)} .cpp files scanned")
    if failed:
        print("A heavy header reaches more files than its budget. Keep it out of headers "
              "(forward declarations, nlohmann/json_fwd.hpp, pimpl) or, if the growth is "
              "meant, raise the budget with --record and say why in the commit.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
