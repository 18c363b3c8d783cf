# SPDX-License-Identifier: Apache-2.0
"""The README's usage blocks are each tool's --help, verbatim.

Every epctx tool generates its --help from its one option table
(runtime/tools/cli_args.h). The README holds that text in a fenced block
starting with "usage: <tool> ". --check fails (exit 1) naming the tool whose
block differs or is missing; without it the blocks are rewritten.

usage: readme_usage.py [--check] README.md TOOL_BINARY...
"""
import os
import subprocess
import sys


def help_text(tool):
    r = subprocess.run([tool, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       check=False, text=True)
    if r.returncode != 0 or r.stderr:
        sys.exit(f"readme_usage: {tool} --help exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout.rstrip("\n").split("\n")


def find_block(lines, name):
    """(start, end) of the fenced block's content for tool `name`, or None."""
    for i, line in enumerate(lines):
        if line.strip() == "```" and i + 1 < len(lines) and \
                lines[i + 1].startswith(f"usage: {name} "):
            for j in range(i + 1, len(lines)):
                if lines[j].strip() == "```":
                    return i + 1, j
    return None


def main(argv):
    check = argv[:1] == ["--check"]
    if check:
        argv = argv[1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    readme, tools = argv[0], argv[1:]
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    bad = []
    for tool in tools:
        name = os.path.basename(tool)
        want = help_text(tool)
        span = find_block(lines, name)
        if span is None:
            bad.append(f"{name}: no fenced block starting 'usage: {name} ' in {readme}")
            continue
        have = lines[span[0]:span[1]]
        if have != want:
            diff = next((k for k in range(max(len(have), len(want)))
                         if k >= len(have) or k >= len(want) or have[k] != want[k]), 0)
            bad.append(f"{name}: README line {span[0] + diff + 1} differs from --help: "
                       f"README {have[diff] if diff < len(have) else '<end>'!r}, "
                       f"--help {want[diff] if diff < len(want) else '<end>'!r}")
            if not check:
                lines[span[0]:span[1]] = want
    if check:
        for b in bad:
            print(f"readme_usage: {b}", file=sys.stderr)
        if bad:
            print("readme_usage: run tests/cli/readme_usage.py README.md <tools> to update",
                  file=sys.stderr)
        return 1 if bad else 0
    with open(readme, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
