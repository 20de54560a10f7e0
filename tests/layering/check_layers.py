#!/usr/bin/env python3
"""Fails when an #include points up the layer stack (docs/architecture.md, "Layers").

    daemon -> api -> service -> {engine, db, sandbox} -> base
    inside engine/: cost -> frontend -> hlo -> {kernels -> runtime, chip} -> hardware (stablehlo
    beside frontend, above hlo)
    cli/tpuemu_engine -> engine -> base;  cli/tpuctl -> base only (it speaks REST)

A folder may include its own files and those of any layer below it; engine and db never include
each other. Beast/Asio headers are allowed only where the HTTP wire is (BEAST_ALLOWED: the
server's listener, session, message conversion and shared core in api/, and tpuctl's HTTP client):
they cost seconds per translation unit. tests/ and bench/ sit above everything.

No include cycle among engine/'s files, counted by module: X.h, X.cpp and X_internal.h are one
module (X), any other .cpp its own; a cycle is a module whose includes lead back to it, e.g.
ir.cpp including from_graph.h, which includes ir.h (include_cycles). Prints every offending line
as FILE:LINE: message and exits 1 if there is any.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# folder (relative to the root) -> the top-level folders its files may include
ALLOWED = {
    "base": {"base"},
    # engine/ by what each part is, bottom to top (docs/architecture.md, "engine/"): a part may
    # include its own files and those of the parts below it. Outside engine/ they count as one layer.
    "engine/hardware": {"base", "engine/hardware"},
    "engine/chip": {"base", "engine/hardware", "engine/chip"},
    "engine/runtime": {"base", "engine/hardware", "engine/runtime"},
    "engine/kernels": {"base", "engine/hardware", "engine/runtime", "engine/kernels"},
    "engine/hlo": {"base", "engine/hardware", "engine/chip", "engine/runtime", "engine/kernels",
                   "engine/hlo"},
    "engine/stablehlo": {"base", "engine/hardware", "engine/chip", "engine/runtime",
                         "engine/kernels", "engine/hlo", "engine/stablehlo"},
    "engine/frontend": {"base", "engine/hardware", "engine/chip", "engine/runtime",
                        "engine/kernels", "engine/hlo", "engine/frontend"},
    "engine/cost": {"base", "engine/hardware", "engine/chip", "engine/runtime", "engine/kernels",
                    "engine/hlo", "engine/stablehlo", "engine/frontend", "engine/cost"},
    "engine": {"base", "engine"},  # files at engine/'s root (none today) and unknown sub-folders
    "db": {"base", "db"},
    "sandbox": {"base", "sandbox"},
    "service": {"base", "engine", "db", "sandbox", "service"},
    "api": {"base", "engine", "service", "api"},
    "daemon": {"base", "engine", "db", "sandbox", "service", "api", "daemon"},
    "cli/tpuemu_engine": {"base", "engine", "cli/tpuemu_engine"},
    "cli/tpuctl": {"base", "cli/tpuctl"},
}
# Files that may include Boost.Beast / Boost.Asio.
BEAST_ALLOWED = {
    "base/boost_net.cpp",  # their separately compiled code, once
    "api/http_server.cpp",
    "api/http_server_core.h",
    "api/http_session.h",
    "api/http_session.cpp",
    "api/http_message.h",
    "api/http_message.cpp",
    "api/connection_takeover.h",  # a response that takes the socket over (a WebSocket)
    "api/terminal_session.cpp",  # the dashboard's terminal: Beast's WebSocket
    "cli/tpuctl/http_client.cpp",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def owner(rel):
    """The ALLOWED key a source file belongs to (longest matching folder), or None."""
    best = None
    for folder in ALLOWED:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def target_layer(path):
    """The ALLOWED key an included project path belongs to, or None for a non-project header."""
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if path.startswith(folder + "/"):
            return folder
    top = path.split("/", 1)[0]
    if top in ("cli", "tests", "bench", "web", "docs", "scripts"):
        return top
    return None


# Folders whose files must form no include cycle (module by module, see the docstring).
ACYCLIC = ("engine/",)


def module_of(rel):
    """The module a file belongs to: its path without suffix, less a header's "_internal"."""
    path = pathlib.PurePosixPath(rel)
    stem = path.stem
    if path.suffix == ".h" and stem.endswith("_internal"):
        stem = stem[: -len("_internal")]
    return (path.parent / stem).as_posix()


def include_cycles(includes):
    """includes: {file: [included project path, ...]}. Returns one list per cycle among the
    files' modules: the modules in cycle order, each with the file whose include leads on, as
    [(module, file, included path), ...], the last one leading back to the first."""
    edges = {}  # module -> {module: (file, included path)}
    for rel, paths in includes.items():
        a = module_of(rel)
        for path in paths:
            b = module_of(path)
            if b != a:
                edges.setdefault(a, {}).setdefault(b, (rel, path))
    # Tarjan's strongly connected components, iteratively; each component of more than one
    # module holds a cycle, which a walk inside it finds.
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, successors = work[-1]
            w = next(successors, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    components.append(set(component))
    cycles = []
    for component in components:
        start = min(component)
        # Breadth-first from start inside the component to a module that leads back to it.
        parent = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(edges.get(v, {})):
                if w == start:
                    end = v
                    break
                if w in component and w not in parent:
                    parent[w] = v
                    queue.append(w)
        chain = [end]
        while parent[chain[-1]] is not None:
            chain.append(parent[chain[-1]])
        chain.reverse()
        cycle = []
        for k, v in enumerate(chain):
            w = chain[k + 1] if k + 1 < len(chain) else start
            cycle.append((v,) + edges[v][w])
        cycles.append(cycle)
    return sorted(cycles)


def main():
    errors = []
    checked = 0
    acyclic_includes = {}  # file -> the project paths it includes, for include_cycles
    line_of = {}  # (file, included path) -> line number
    for file in sorted(ROOT.rglob("*")):
        if file.suffix not in (".h", ".cpp") or not file.is_file():
            continue
        rel = file.relative_to(ROOT).as_posix()
        if rel.startswith(("build", "tests/", "bench/", ".")) or "/build" in rel.split("/")[0]:
            continue
        layer = owner(rel)
        if layer is None:
            errors.append(f"{rel}:1: not in a known layer folder ({', '.join(sorted(ALLOWED))})")
            continue
        checked += 1
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, path = m.groups()
            if path.startswith(("boost/beast", "boost/asio")) and rel not in BEAST_ALLOWED:
                errors.append(f"{rel}:{number}: includes <{path}>: Beast/Asio belong in "
                              f"{', '.join(sorted(BEAST_ALLOWED))} only")
            if kind != '"':
                continue
            if rel.startswith(ACYCLIC) and path.startswith(ACYCLIC):
                acyclic_includes.setdefault(rel, []).append(path)
                line_of.setdefault((rel, path), number)
            target = target_layer(path)
            if target is None:
                continue
            if target.startswith("engine/") and not layer.startswith("engine"):
                target = "engine"  # engine/'s parts are one layer to the folders above it
            if layer == "engine" and target.startswith("engine"):
                continue  # a part the table does not know yet: engine/'s old rule
            if target not in ALLOWED[layer]:
                errors.append(f"{rel}:{number}: {layer}/ includes \"{path}\" ({target}/), which is "
                              f"not below it; {layer}/ may include {', '.join(sorted(ALLOWED[layer]))}")
    for cycle in include_cycles(acyclic_includes):
        first = cycle[0]
        route = " -> ".join(f"{file} includes {path}" for _, file, path in cycle)
        errors.append(f"{first[1]}:{line_of[first[1:]]}: include cycle among {', '.join(m for m, _, _ in cycle)}: "
                      f"{route}; break it (move the function to the module that owns it, a "
                      f"forward declaration, or a smaller header)")
    for e in errors:
        print(e)
    print(f"check_layers: {checked} files, {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
