#!/usr/bin/env python3
"""Fails when an #include points up the layer stack (docs/architecture.md, "Layers").

    daemon -> api -> service -> {engine, db, sandbox} -> base
    inside engine/: cost -> frontend -> hlo -> {kernels -> runtime, chip} -> hardware (stablehlo
    beside frontend, above hlo)
    cli/tpuemu_engine -> engine -> base;  cli/tpuctl -> base only (it speaks REST)

A folder may include its own files and those of any layer below it; engine and db never include
each other. Beast/Asio headers are allowed only where the HTTP wire is (BEAST_ALLOWED: the
server's listener, session, message conversion and shared core in api/, and tpuctl's HTTP client):
they cost seconds per translation unit. tests/ and bench/ sit above everything. Prints every offending line as FILE:LINE: message and exits 1 if there is any.
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


def main():
    errors = []
    checked = 0
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
    for e in errors:
        print(e)
    print(f"check_layers: {checked} files, {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
