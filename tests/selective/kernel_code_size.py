#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Bytes a linked program holds from the CPU kernels (the objects of
runtime/src/kernels/*.cc, also as members of libepctx.a), read from a GNU ld
map file (link with -Wl,-Map=FILE).
usage: kernel_code_size.py KERNELS_DIR MAP [MAP...]   prints text / rodata / data"""
import glob
import os
import re
import sys

SECTION = re.compile(r"^ (\.[\w.$]+)\s*(?:(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+))?\s*$")
CONT = re.compile(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+)\s*$")


def kernel_objects(kernels_dir):
    return {os.path.basename(p) + ".o" for p in glob.glob(kernels_dir + "/*.cc")}


def object_name(obj):
    m = re.search(r"\(([^()]+)\)$", obj)  # lib.a(member.o)
    return m.group(1) if m else os.path.basename(obj)


def kernel_bytes(path, objects):
    sums = {"text": 0, "rodata": 0, "data": 0}
    in_memory_map = False
    pending = None
    for line in open(path, errors="replace"):
        if line.startswith("Linker script and memory map"):
            in_memory_map = True
            continue
        if not in_memory_map or line.startswith("/DISCARD/"):
            continue
        m = SECTION.match(line)
        if m:
            pending = m.group(1)
            if m.group(2) is None:
                continue
            size, obj = int(m.group(3), 16), m.group(4)
        else:
            c = CONT.match(line)
            if not c or pending is None:
                pending = None
                continue
            size, obj = int(c.group(2), 16), c.group(3)
        name, pending = pending, None
        if object_name(obj) not in objects:
            continue
        if name.startswith(".text"):
            sums["text"] += size
        elif name.startswith(".rodata"):
            sums["rodata"] += size
        elif name.startswith((".data", ".bss")):
            sums["data"] += size
    return sums


objects = kernel_objects(sys.argv[1])
for path in sys.argv[2:]:
    s = kernel_bytes(path, objects)
    print("%s: kernels text %d, rodata %d, data+bss %d, total %d bytes" %
          (path, s["text"], s["rodata"], s["data"], sum(s.values())))
