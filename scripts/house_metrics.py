#!/usr/bin/env python3
"""The size of the house: the largest source files and the longest functions.

Usage:
  scripts/house_metrics.py [--rev REV] [--files N] [--functions N] [DIR ...]

Reads the C++ sources (.cpp, .hpp, .h, .cc) git tracks under DIR (default: every module:
traces comm emulator collectives model cli; tests and bench are left out), at the working
tree or, with --rev, at a commit (`--rev HEAD~3`), so a before and an after are measured
the same way. Prints the N largest files by line count and the N longest function bodies.

A function is a brace block whose header (the text since the previous `;`, `{` or `}`)
ends in a parameter list, optionally followed by const, noexcept, override, a trailing
return type or a member-initializer list, and is not an if/for/while/switch/catch or a
lambda; its length runs from its header's first line to its closing brace. Lambdas and
nested classes count toward the function holding them. Comments, string and character
literals are blanked before braces are matched. A heuristic, not a compiler, but the same
heuristic before and after.
"""
import argparse
import re
import subprocess
import sys

MODULES = ["traces", "comm", "emulator", "collectives", "model", "cli"]
SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
           "static_assert", "requires", "noexcept"}


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def list_files(rev, dirs):
    if rev:
        out = git("ls-tree", "-r", "--name-only", rev, "--", *dirs)
    else:
        out = git("ls-files", "--", *dirs)
    return [f for f in out.splitlines() if f.endswith(SUFFIXES)]


def read(rev, path):
    if rev:
        return git("show", f"{rev}:{path}")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def blank_comments_and_literals(text):
    """The text with comments, strings and chars turned to spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


HEADER_END = re.compile(
    r"\)\s*(?:const\s*)?(?:&&?\s*)?(?:noexcept(?:\s*\([^)]*\))?\s*)?(?:override\s*)?"
    r"(?:final\s*)?(?:->\s*[\w:<>,\s*&]+)?$")
INIT_LIST = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({].*$", re.S)


def function_name(header):
    """The name before the parameter list of a function header, or None."""
    head = header.strip()
    if not head:
        return None
    init = INIT_LIST.search(head)
    if init:  # Type::Type(args) : member_(x), ...
        depth = 0
        for k in range(len(head) - 1, -1, -1):
            if head[k] == ")":
                depth += 1
            elif head[k] == "(":
                depth -= 1
            if head[k] == ":" and depth == 0 and (k == 0 or head[k - 1] != ":") and (
                    k + 1 >= len(head) or head[k + 1] != ":"):
                head = head[:k].rstrip()
                break
    if not HEADER_END.search(head):
        return None
    # The parameter list: from the last ')' back to its '('.
    close = head.rfind(")")
    depth = 0
    for k in range(close, -1, -1):
        if head[k] == ")":
            depth += 1
        elif head[k] == "(":
            depth -= 1
            if depth == 0:
                before = head[:k].rstrip()
                m = re.search(r"([\w:~]+(?:<[^<>]*>)?|operator\s*[^\s(]+)$", before)
                if not m:
                    return None
                name = m.group(1)
                bare = name.split("::")[-1]
                if bare in CONTROL or before.endswith("]") or name.endswith("]"):
                    return None
                return name
    return None


def functions(text):
    """(name, first line, last line) of every outermost function body in `text`."""
    code = blank_comments_and_literals(text)
    found = []
    stack = []  # per open brace: the function it opens (or None), its header's line
    start = 0  # where the current header starts
    line = 1
    line_at = []
    for k, c in enumerate(code):
        line_at.append(line)
        if c == "\n":
            line += 1
    in_function = 0
    for k, c in enumerate(code):
        if c == "{":
            name = None
            if in_function == 0:
                header = code[start:k]
                header = re.sub(r"^\s*(?:template\s*<[^{};]*>\s*)?", "", header)
                name = function_name(header)
            if name:
                first = start + len(code[start:k]) - len(code[start:k].lstrip())
                stack.append((name, line_at[first]))
                in_function += 1
            else:
                stack.append(None)
            start = k + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if top:
                    in_function -= 1
                    found.append((top[0], top[1], line_at[k]))
            start = k + 1
        elif c == ";":
            start = k + 1
        elif c == "#" and (k == 0 or code[k - 1] == "\n"):  # a preprocessor line
            end = code.find("\n", k)
            start = len(code) if end < 0 else end + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", help="a commit to measure instead of the working tree")
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--functions", type=int, default=10)
    parser.add_argument("dirs", nargs="*", default=MODULES)
    args = parser.parse_args()
    sizes = []
    bodies = []
    for path in list_files(args.rev, args.dirs):
        text = read(args.rev, path)
        sizes.append((text.count("\n"), path))
        for name, first, last in functions(text):
            bodies.append((last - first + 1, f"{path}:{first}", name))
    print(f"largest files ({args.rev or 'working tree'}):")
    for lines, path in sorted(sizes, key=lambda s: (-s[0], s[1]))[: args.files]:
        print(f"  {lines:6d}  {path}")
    print("longest functions:")
    for lines, where, name in sorted(bodies, key=lambda b: (-b[0], b[1]))[: args.functions]:
        print(f"  {lines:6d}  {name}  ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
