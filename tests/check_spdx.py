#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the project's source files that lack an SPDX-License-Identifier line.

Sources are the files git tracks (or, outside a git checkout, every file
under the root except build/) with a code suffix: C/C++, Python, shell,
CMake, JavaScript, flatbuffers schemas, Makefiles. The line must be within a
file's first five lines. Exits 1 and prints each file lacking it; with --fix
adds "SPDX-License-Identifier: Apache-2.0" in the file's comment syntax
(after a shebang) instead. Run it after merging branches that add files.

usage: check_spdx.py [ROOT] [--fix]
"""
import os
import subprocess
import sys

LICENSE = "Apache-2.0"
TAG = "SPDX-License-Identifier:"
SLASH = (".cc", ".hpp", ".js", ".fbs")
BLOCK = (".c", ".h")
HASH = (".py", ".sh", ".cmake", ".in")
HASH_NAMES = ("CMakeLists.txt", "Makefile", "run")


def comment_for(path):
    name = os.path.basename(path)
    if name.endswith(SLASH):
        return f"// {TAG} {LICENSE}\n"
    if name.endswith(BLOCK):
        return f"/* {TAG} {LICENSE} */\n"
    if name.endswith(HASH) or name in HASH_NAMES:
        return f"# {TAG} {LICENSE}\n"
    return None


def sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in ("build", ".git")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(f for f in files if comment_for(f) and os.path.isfile(os.path.join(root, f)))


def main():
    args = [a for a in sys.argv[1:] if a != "--fix"]
    fix = "--fix" in sys.argv[1:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    missing = []
    for rel in sources(root):
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if any(TAG in line for line in lines[:5]):
            continue
        missing.append(rel)
        if fix:
            at = 1 if lines and lines[0].startswith("#!") else 0
            lines.insert(at, comment_for(rel))
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(lines)
    for rel in missing:
        print(f"{'added SPDX line: ' if fix else 'no SPDX line: '}{rel}")
    if missing and not fix:
        print(f"check_spdx: {len(missing)} source file(s) lack '{TAG} {LICENSE}'; "
              "run python3 tests/check_spdx.py --fix", file=sys.stderr)
        return 1
    print(f"check_spdx: {len(sources(root))} source files, "
          f"{'all' if not missing else 'now all'} with an SPDX line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
