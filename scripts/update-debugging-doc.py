#!/usr/bin/env python3
"""Regenerates the real outputs in docs/debugging.md.

Every ```console block of the document whose first line is `$ COMMAND` (`ranklab ...`, `cat ...`)
is run from a scratch directory with the built binary, and the block is rewritten as the
command, its stdout and stderr, and its exit code. The prose around the blocks is left
alone. Usage:

    python3 scripts/update-debugging-doc.py [path/to/ranklab]   # default: build/cli/ranklab

The document's outputs are therefore the program's own, not hand-written (timings in
`explore`'s lines change from run to run).
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "debugging.md")
BLOCK = re.compile(r"```console\n(\$ [^\n]*)\n.*?```", re.S)


def run(command, binary, cwd):
    args = shlex.split(command[2:])
    shown = command
    if args[0] == "ranklab":
        args[0] = binary
    env = dict(os.environ, COLUMNS="100")
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    # Scratch paths are the reader's own files: show them relative.
    out = out.replace(cwd + "/", "")
    lines = [shown] + out.rstrip("\n").split("\n") if out.strip() else [shown]
    if done.returncode != 0:
        lines.append(f"[exit code {done.returncode}]")
    return "```console\n" + "\n".join(lines) + "\n```"


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(ROOT, "build", "cli", "ranklab"))
    if not os.access(binary, os.X_OK):
        sys.exit(f"update-debugging-doc: no ranklab binary at {binary} (build first)")
    with open(DOC) as f:
        text = f.read()
    with tempfile.TemporaryDirectory(prefix="ranklab_doc_") as scratch:
        # Commands run in order in one scratch directory, so a later block can read the
        # files an earlier one wrote (traces, DOT graphs).
        text = BLOCK.sub(lambda m: run(m.group(1), binary, scratch), text)
    with open(DOC, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
