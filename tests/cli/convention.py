# SPDX-License-Identifier: Apache-2.0
"""Every epctx tool keeps the one command-line convention: --version exits 0
naming the tool; an unknown option and a missing value exit 2 with one line
"<tool>: error: ..."; -C accepts key=value and ORT's key|value (a bad -C
entry is a usage error too).

usage: convention.py TOOL_BINARY...
"""
import os
import subprocess
import sys


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          check=False)


def main(tools):
    bad = []
    for tool in tools:
        name = os.path.basename(tool)
        r = run([tool, "--version"])
        if r.returncode != 0 or not r.stdout.startswith(f"{name} (epctx) "):
            bad.append(f"{name} --version: exit {r.returncode}, stdout {r.stdout!r}")
        for args, what in ((["--no-such-option"], "unknown option '--no-such-option'"),
                           (["-C"], "option '-C' needs a value"),
                           (["-C", "novalue"], "-C 'novalue': expected key=value")):
            r = run([tool] + args)
            lines = r.stderr.strip().split("\n")
            if r.returncode != 2 or len(lines) != 1 or \
                    not lines[0].startswith(f"{name}: error: ") or what not in lines[0]:
                bad.append(f"{name} {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}; "
                           f"expected exit 2 and one line naming {what!r}")
        r = run([tool, "--help"])
        for opt in ("--help", "--version", "--json", "-C key=value"):
            if opt not in r.stdout:
                bad.append(f"{name} --help lacks {opt}")
    for b in bad:
        print(f"convention: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
