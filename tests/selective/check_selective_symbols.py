#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that a program linked with a selective runtime holds exactly the CPU
kernels its op list keeps: every kernel of a listed op is defined, no other
kernel of ops.inc is (the linker dropped them).
usage: check_selective_symbols.py NM PROGRAM OPS_INC OPS_TXT"""
import re
import subprocess
import sys


def rows(ops_inc):
    # A row may name a prepare function after the kernel: both go with the op.
    pat = re.compile(r'^EPCTX_CPU_OP(?:_PREPARED)?\("([^"]*)", (\w+), \w+, \w+, (\w+)'
                     r'(?:, (\w+))?\)')
    for line in open(ops_inc):
        m = pat.match(line)
        if m:
            domain, op, fn, prepare = m.groups()
            name = op if not domain else domain + ":" + op
            yield name, fn
            if prepare:
                yield name, prepare


def main():
    nm, program, ops_inc, ops_txt = sys.argv[1:5]
    kept = set()
    for line in open(ops_txt):
        line = line.split("#", 1)[0].strip()
        if line:
            kept.add(line)
    want = {}
    for op, fn in rows(ops_inc):
        want[fn] = want.get(fn, False) or op in kept
    out = subprocess.run([nm, "-C", "--defined-only", program], check=True,
                         capture_output=True, text=True).stdout
    # Functions only: an ASan build keeps a dropped kernel's static data
    # (epctx::kern::Momentum(...)::kRequired) for its global registry.
    code = re.compile(r"^\S*\s*[tTwW] epctx::kern::(\w+)\(epctx::(?:Kernel|Prepare)Context&\)$")
    defined = {m.group(1) for m in map(code.match, out.splitlines()) if m}
    missing = sorted(fn for fn, k in want.items() if k and fn not in defined)
    extra = sorted(fn for fn, k in want.items() if not k and fn in defined)
    if missing:
        print("kernels of listed ops missing:", " ".join(missing))
    if extra:
        print("kernels of ops the list leaves out still linked:", " ".join(extra))
    kept_fns = sorted(fn for fn, k in want.items() if k)
    print("%d of %d kernels linked: %s" % (len(kept_fns), len(want), " ".join(kept_fns)))
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
