#!/usr/bin/env python3
"""Fails when a file includes a header of a module its target does not link.

The module graph is CMake's (tests/layering/CMakeLists.txt writes it): one line
"MODULE: LINKED..." per module folder, MODULE and LINKED relative to the source root. A file
belongs to the deepest module folder that holds it; its project includes ("emulator/x.hpp")
must name a header of that module or of one it links directly. CMake's PUBLIC links let a
layer-skipping include compile, so nothing else would stop one. The links themselves must
point down the layers (LAYERS).

    check_includes.py --root SOURCE_DIR --links module_links.txt

Prints one line per bad include, "FILE:LINE: MODULE includes HEADER of MODULE, which its
target does not link (it links: ...)", and exits 1; exits 0 when every include is allowed.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".cpp", ".hpp")

# The layers, lowest first: a module may link only modules before its own layer (a module
# folder below a layer's folder, collectives/mpi, is of that layer and may link it).
LAYERS = ("traces", "comm", "emulator", "collectives", "model", "backends", "cli")

# Includes that cross the graph, each with why and until when: none today. RunReport, the
# last one (collectives/mpi on emulator/report.hpp), moved to comm/run_report.hpp. A line
# here is ("MODULE", "HEADER").
KNOWN_EXCEPTIONS = frozenset()


def read_links(path):
    """{module: set of modules it links} from the table CMake wrote."""
    links = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        module, sep, linked = line.partition(":")
        if not sep:
            sys.exit(f"{path}:{number}: expected 'MODULE: LINKED...', got {line!r}")
        links[module.strip()] = set(linked.split())
    return links


def module_of(relative, modules):
    """The deepest module folder holding `relative` (a posix path), or None."""
    best = None
    for module in modules:
        if relative == module or relative.startswith(module + "/"):
            if best is None or len(module) > len(best):
                best = module
    return best


def layer_of(module):
    """The index in LAYERS of the layer `module` is part of, or None."""
    top = module.split("/")[0]
    return LAYERS.index(top) if top in LAYERS else None


def reverse_links(links):
    """Links that point up (or across) the layers, as printable lines."""
    problems = []
    for module, linked in sorted(links.items()):
        for other in sorted(linked):
            here, there = layer_of(module), layer_of(other)
            inside = module.startswith(other + "/")  # collectives/mpi on collectives
            if here is None or there is None or (there >= here and not inside):
                problems.append(f"{module} links {other}: the layers are "
                                f"{' <- '.join(LAYERS)}, each linking only those before it")
    return problems


def check(root, links, exceptions=KNOWN_EXCEPTIONS):
    """The bad includes under `root`, and the reverse links, as printable lines."""
    problems = reverse_links(links)
    for module in sorted(links):
        for path in sorted((root / module).rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            relative = path.relative_to(root).as_posix()
            if module_of(relative, links) != module:
                continue  # a deeper module's file: checked under that module
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                header = match.group(1)
                target = module_of(header, links)
                if target is None or target == module or target in links[module]:
                    continue  # not a module's header, the file's own, or one it links
                if (module, header) in exceptions:
                    continue
                linked = ", ".join(sorted(links[module])) or "nothing"
                problems.append(f"{relative}:{number}: {module} includes {header} of {target}, "
                                f"which its target does not link (it links: {linked})")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, required=True, help="the source tree")
    parser.add_argument("--links", type=pathlib.Path, required=True, help="the module table")
    args = parser.parse_args()
    links = read_links(args.links)
    if not links:
        sys.exit(f"{args.links}: no modules")
    problems = check(args.root, links)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) with the module graph: link a module below in the "
              "including module's CMakeLists.txt, or include from a module it links",
              file=sys.stderr)
        return 1
    print(f"includes follow the module links ({len(links)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
