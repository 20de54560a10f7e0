#!/usr/bin/env python3
"""Fails when a doc names code that is not there: a file, a function or type, or a flag.

Every `code span` of README.md, docs/*.md and bench/README.md is read as one of:

    a path        `engine/hlo/cost_model.h`, `engine/hlo/shape_inference*.cpp`, `timing.h`
                  (with a folder: it must exist, globs allowed; a bare file name: some file of
                  the tree has that name)
    a function    `JobRunner::Run`, `PriceModule(...)`, `Status`-like CamelCase names with ::
                  or a call: every identifier of it appears in the project's sources
    a flag        `--serve-engine jetstream`, `--io-threads`: the flag's text appears in the
                  sources (quoted, as CLI11 and the daemon's flag table spell it)

Anything else in backticks (JSON, shell lines, HTTP paths, numbers) is not a reference and is
skipped. Prints FILE:LINE: message per dangling reference and exits 1 if there is any.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "bench/README.md"] + sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
SOURCE_DIRS = ("base", "engine", "db", "sandbox", "service", "api", "daemon", "cli", "tests",
               "bench", "web", "scripts", "docker")
SOURCE_SUFFIXES = {".h", ".cpp", ".js", ".mjs", ".py", ".sh", ".cmake", ".txt", ".html", ""}
TOP = {"base", "engine", "db", "sandbox", "service", "api", "daemon", "cli", "tests", "bench",
       "web", "docs", "scripts", "docker", "shared"}
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w.*/-]+\.(h|cpp|py|md|js|mjs|sh|txt|json|cmake|yml|yaml|html|css)$")
FLAG = re.compile(r"^(--[a-z][a-z0-9-]*)")
CALL = re.compile(r"^([A-Za-z_]\w*(?:::[A-Za-z_~]\w*)*)(?:\(.*\))?$")
# Names documented but defined outside the project (std, Google's APIs, tools).
EXTERNAL = {"std", "absl", "nlohmann", "json", "CLI", "boost", "beast", "asio", "gtest", "xla",
            "jax", "jnp", "np", "pytest", "sqlite3", "PQ", "Eigen", "dnnl", "omp", "pthread",
            "clone", "unshare", "mount", "pivot_root", "setns", "prctl", "execve", "fork"}

# References to code that is not the project's: upstream files the docs cite as sources, files a
# worker holds, Debian's, and gcloud's own flags. Each is named where it is cited.
OUTSIDE = {
    "libjs-chart.js",  # Debian's libjs-chart.js package (README.md, the dashboard's charts)
    "cloud_tpu_cluster.py",  # JAX's TPU cluster detection (README.md)
    "tpus.md",  # jax-ml/scaling-book (docs/cost-model.md, docs/hardware-model.md)
    "base.yml", "16b.sh", "32b.sh", "128b.sh", "run_recipe.sh",  # MaxText / tpu-recipes
    "topology_utils.py",  # SCALE-Sim (docs/hardware-model.md)
    "docs/source/tutorials/precision_tutorial.py",  # JAX's docs (docs/hardware-model.md)
    "docs/operation_semantics.md",  # XLA's docs (docs/hlo.md)
    "profile.sh",  # a file inside a worker (docs/workers.md)
    "--access-token-file", "--metadata-from-file", "--data-disk", "--boot-disk",  # gcloud's
}


def source_text():
    chunks = []
    for top in SOURCE_DIRS:
        base = ROOT / top
        if not base.is_dir():
            continue
        for f in base.rglob("*"):
            rel = f.relative_to(ROOT).as_posix()
            if rel.startswith("build") or "/node_modules/" in rel or not f.is_file():
                continue
            if f.suffix in SOURCE_SUFFIXES and f.stat().st_size < 2_000_000:
                chunks.append(f.read_text(errors="replace"))
    for f in ROOT.glob("*.txt"):
        chunks.append(f.read_text(errors="replace"))
    return "\n".join(chunks)


def file_names():
    names = set()
    for f in ROOT.rglob("*"):
        rel = f.relative_to(ROOT).as_posix()
        if rel.startswith(("build", ".git")) or "/node_modules/" in rel:
            continue
        names.add(f.name)
    return names


def check_path(span, names):
    path = span.split(":", 1)[0].strip()
    if not PATH.match(path) or path in OUTSIDE:
        return None
    top = path.split("/", 1)[0]
    if "/" in path and top in TOP:
        if "*" in path:
            return None if list(ROOT.glob(path)) else f"no file matches `{path}`"
        return None if (ROOT / path).exists() else f"`{path}` does not exist"
    if "/" in path or "*" in path:
        return None  # a path outside the project (an upstream repository's file)
    return None if path in names else f"no file is named `{path}`"


def check_flag(span, text):
    m = FLAG.match(span)
    if not m:
        return None
    flag = m.group(1)
    if flag in ("--help", "--version") or flag in OUTSIDE:
        return None
    return None if flag in text else f"flag `{flag}` appears nowhere in the sources"


def check_name(span, text):
    m = CALL.match(span.strip())
    if not m:
        return None
    name = m.group(1)
    parts = name.split("::")
    # A single word is a name only when it reads as code: CamelCase (two humps at least), a
    # call, or a scope.
    if len(parts) == 1 and not span.strip().endswith(")") and not re.match(
            r"^[A-Z][a-z0-9]{2,}[A-Z][a-z]\w*$", parts[0]):
        return None
    if parts[0] in EXTERNAL or parts[0].lower() in EXTERNAL:
        return None
    if len(parts) == 1 and not re.match(r"^[A-Z][a-z]+[A-Z]\w*$", parts[0]):
        return None  # f(x) in prose, gcloud(…): only CamelCase calls are the project's
    for part in parts:
        if part in ("tpuemu", "engine", "hlo", "cost", "service", "api", "db", "sandbox", "base"):
            continue
        if not re.search(r"\b" + re.escape(part.lstrip("~")) + r"\b", text):
            return f"`{part}` (of `{name}`) appears nowhere in the sources"
    return None


def main():
    text = source_text()
    names = file_names()
    errors = []
    checked = 0
    for doc in DOCS:
        path = ROOT / doc
        if not path.exists():
            continue
        in_fence = False
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for span in SPAN.findall(line):
                for check in (lambda s: check_path(s, names), lambda s: check_flag(s, text),
                              lambda s: check_name(s, text)):
                    problem = check(span)
                    if problem is not None:
                        errors.append(f"{doc}:{number}: {problem}")
                        break
                checked += 1
    for e in errors:
        print(e)
    print(f"check_doc_refs: {len(DOCS)} docs, {checked} code spans, {len(errors)} dangling")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
