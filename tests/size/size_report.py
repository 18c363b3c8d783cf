#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size of the runtime per part, from the GNU ld map of tests/size/size_app.

Counts the bytes each input object contributes to the file-backed sections
of the stripped, --gc-sections image (code, read-only data, data; .bss is
RAM and listed apart) and sums them per part:
  core     runtime/ outside kernels and trust (ONNX reader, container,
           session, C API)
  kernels  the CPU kernels (runtime/src/kernels)
  vnpu     the vnpu driver (hal/drivers/vnpu)
  trust    signed-package verification (runtime/src/trust)
  mbedcrypto  the part of libmbedcrypto.a that trust pulls in (third party)
Writes a table and, with --budget, fails (exit 1) when a part of this
target grows past its line in the budget file ("target part max_bytes").

usage: size_report.py --target NAME --map FILE [--budget FILE] [--out FILE]
                      [--print-budget]
--print-budget prints budget lines for this target: the measured sizes plus
3 %, rounded up to KiB (how the lines in budget.txt were made).
"""
import argparse
import re
import sys

PARTS = ("core", "kernels", "vnpu", "trust", "mbedcrypto")
FILE_BACKED = re.compile(r"^\.(text|rodata|srodata|data|sdata|init_array|fini_array|"
                         r"eh_frame|gcc_except_table|ARM\.ex|tdata|got)")
RAM = re.compile(r"^\.(bss|sbss|tbss)")
INPUT = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")


def part_of(path):
    if "epctx_vnpu_obj.dir" in path:
        return "vnpu"
    # The kernel table and the SGEMM micro-kernels (shared with vnpu) count
    # with the CPU kernels.
    if "epctx_registry_obj.dir" in path or "epctx_ukernels_obj.dir" in path:
        return "kernels"
    if "epctx_core_obj.dir" in path:
        if "/src/kernels/" in path:
            return "kernels"
        if "/src/trust/" in path:
            return "trust"
        return "core"
    if "libmbedcrypto" in path:
        return "mbedcrypto"
    return None


def measure(map_path):
    flash = dict.fromkeys(PARTS, 0)
    ram = dict.fromkeys(PARTS, 0)
    in_map = False
    out_section = None
    pending = None  # an input section name alone on its line
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not in_map:
                in_map = line.startswith("Linker script and memory map")
                continue
            if line and not line[0].isspace():
                out_section = line.split()[0]
                pending = None
                continue
            m = INPUT.match(line)
            if not m:
                pending = line.strip() if re.match(r"^ \S+$", line) else None
                continue
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            part = part_of(m.group(4))
            if not name or not part or not size or not out_section:
                continue
            if FILE_BACKED.match(out_section):
                flash[part] += size
            elif RAM.match(out_section):
                ram[part] += size
    return flash, ram


BOARD_PARTS = ("core", "kernels", "ukernels", "vnpu", "trust", "pal", "mbedtls", "libc")


def read_budget(path, target):
    budget = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            # The board images (cortex-m55) have parts of their own, checked
            # by boards/mps3-an547/size_report.py.
            parts = BOARD_PARTS if line and line[0] == "cortex-m55" else PARTS
            if len(line) != 3 or line[1] not in parts or not line[2].isdigit():
                sys.exit(f"{path}:{n}: expected 'target part max_bytes' with a part in {parts}")
            if line[0] == target:
                budget[line[1]] = int(line[2])
    return budget


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--budget")
    ap.add_argument("--out")
    ap.add_argument("--print-budget", action="store_true")
    args = ap.parse_args()
    flash, ram = measure(args.map)
    if args.print_budget:
        for p in PARTS:
            print(f"{args.target} {p} {-(-flash[p] * 103 // 100 // 1024) * 1024}")
        return 0
    if flash["core"] == 0:
        sys.exit(f"size_report: {args.map}: no runtime objects found (not a GNU ld map of size_app?)")
    budget = read_budget(args.budget, args.target) if args.budget else {}
    rows = [f"size report {args.target} (-Os, --gc-sections, stripped; bytes of code+data, .bss apart)",
            f"  {'part':<11}{'flash':>9}{'budget':>9}{'bss':>8}"]
    over = []
    for p in PARTS:
        b = budget.get(p)
        rows.append(f"  {p:<11}{flash[p]:>9}{(b if b is not None else '-'):>9}{ram[p]:>8}")
        if b is not None and flash[p] > b:
            over.append(f"{args.target} {p}: {flash[p]} bytes > budget {b}")
    ours = sum(flash[p] for p in PARTS if p != "mbedcrypto")
    rows.append(f"  {'epctx':<11}{ours:>9}{'':>9}{'':>8}  (core+kernels+vnpu+trust)")
    if args.budget and not budget:
        over.append(f"{args.budget} has no lines for target {args.target}")
    text = "\n".join(rows) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    for o in over:
        print(f"size_report: error: {o} (tests/size/budget.txt)", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
