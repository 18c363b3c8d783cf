#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Splits a linked image's bytes by part, from its GNU ld map file.

usage: size_report.py IMAGE.map SOURCE_DIR [--budget FILE]

With --budget, fails (exit 1) when a part's text + data grows past its
"cortex-m55 <part> <max_bytes>" line in FILE (tests/size/budget.txt).

Parts: core (runtime/src outside kernels and trust), kernels
(runtime/src/kernels), ukernels (runtime/ukernels), vnpu (hal/drivers/vnpu), trust (runtime/src/trust),
pal (runtime/src/pal), mbedtls, libc (picolibc, libm, libgcc), board (the
image's own code), package (the embedded files). Columns: text (code and
read-only data), data, bss (the runtime's arena and the stack included).
"""
import glob
import os
import re
import sys

SECTION = re.compile(r"^ (\.[\w.$@-]+|COMMON)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*))?$")
PLACEMENT = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")


def members(src, folder):
    return {os.path.basename(p) + ".obj" for p in glob.glob(os.path.join(src, folder, "**", "*.cc"), recursive=True)}


def main(argv):
    budget_file = None
    if len(argv) == 5 and argv[3] == "--budget":
        budget_file = argv[4]
        argv = argv[:3]
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    text = open(argv[1]).read()
    src = argv[2]
    kernels = members(src, "runtime/src/kernels")
    trust = members(src, "runtime/src/trust")
    vnpu = members(src, "hal/drivers/vnpu/src")
    ukernels = members(src, "runtime/ukernels/src")
    start = text.find("Linker script and memory map")
    lines = text[start:].splitlines()

    def part(obj):
        m = re.search(r"\(([^)]+)\)$", obj)
        member = m.group(1) if m else os.path.basename(obj)
        if "libepctx_freestanding.a" in obj:
            if member in kernels:
                return "kernels"
            if member in trust:
                return "trust"
            if member in vnpu:
                return "vnpu"
            if member in ukernels:
                return "ukernels"
            return "core"
        # Objects linked directly (the images link the runtime's object
        # libraries with a registry of their own): the part by source folder.
        if "epctx_vnpu_obj.dir" in obj:
            return "vnpu"
        if "epctx_ukernels_obj.dir" in obj:
            return "ukernels"
        if "/src/kernels/" in obj:
            return "kernels"
        if "epctx_core_obj.dir/src/trust/" in obj:
            return "trust"
        if "epctx_core_obj.dir" in obj:
            return "core"
        if "pal_baremetal" in obj:
            return "pal"
        if "mbedcrypto" in obj:
            return "mbedtls"
        if "board_assets.S" in obj:
            return "package"
        if "/boards/" in obj or member.startswith(("main.", "startup.", "semihost.", "board_assets")):
            return "board"
        return "libc"

    sizes = {}
    pending = None
    for line in lines:
        m = SECTION.match(line)
        if m:
            name, _, size, obj = m.groups()
            if size is None:
                pending = name
                continue
        else:
            m2 = PLACEMENT.match(line)
            if not (pending and m2):
                pending = None
                continue
            name, (_, size, obj) = pending, m2.groups()
        pending = None
        size = int(size, 16)
        if size == 0 or obj.startswith("load address"):
            continue
        if name.startswith((".text", ".rodata", ".ARM.exidx", ".init_array", ".flash_files")):
            col = "text"
        elif name.startswith(".data"):
            col = "data"
        elif name.startswith((".bss", ".noinit", "COMMON")):
            col = "bss"
        else:
            continue
        p = part(obj)
        sizes.setdefault(p, {"text": 0, "data": 0, "bss": 0})[col] += size
    order = ["core", "kernels", "ukernels", "vnpu", "trust", "pal", "mbedtls", "libc", "board", "package"]
    print(f"{'part':<9} {'text':>8} {'data':>6} {'bss':>8}")
    tot = {"text": 0, "data": 0, "bss": 0}
    for p in order:
        if p in sizes:
            s = sizes[p]
            print(f"{p:<9} {s['text']:>8} {s['data']:>6} {s['bss']:>8}")
            for k in tot:
                tot[k] += s[k]
    print(f"{'total':<9} {tot['text']:>8} {tot['data']:>6} {tot['bss']:>8}  (stack not included)")
    if budget_file is None:
        return 0
    budget = {}
    with open(budget_file) as f:
        for line in f:
            w = line.split("#")[0].split()
            if len(w) == 3 and w[0] == "cortex-m55":
                budget[w[1]] = int(w[2])
    if not budget:
        print(f"size_report: error: {budget_file} has no cortex-m55 lines", file=sys.stderr)
        return 1
    over = []
    for p, b in sorted(budget.items()):
        have = sizes.get(p, {"text": 0, "data": 0})
        n = have["text"] + have["data"]
        if n > b:
            over.append(f"cortex-m55 {p}: {n} bytes > budget {b}")
    for o in over:
        print(f"size_report: error: {o} ({budget_file})", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
