#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks tests/BAD_INPUTS.md against the tests it names.

Every catalogue row must name a code epctx knows and a test that exists:
`file::name` where `file` (relative to the repository) defines a test
function `name` or, for tests/hostile/test_bad_inputs.c, a table row "name";
a bare file path (a fuzz regression input) must exist. The row's "message
contains" text, when given, must appear in that file, so a row cannot claim a
case its test does not check. Every table row of test_bad_inputs.c must be in
the catalogue, and there must be at least 100 rows with unique names.
usage: check_catalogue.py REPO_ROOT"""
import os
import re
import sys

root = sys.argv[1]
doc = open(os.path.join(root, "tests/BAD_INPUTS.md"), encoding="utf-8").read()
# The codes live in the HAL's leaf header (hal_types.h), status.h includes it.
codes = set()
for header in ("hal/include/epctx/hal_types.h", "runtime/include/epctx/status.h"):
    codes |= set(re.findall(r"EPCTX_([A-Z_]+)\s*=",
                            open(os.path.join(root, header)).read()))
codes.add("OK")
table = "tests/hostile/test_bad_inputs.c"
table_src = open(os.path.join(root, table), encoding="utf-8").read()
table_rows = set(re.findall(r'^\s*\{"([a-z0-9_]+)", ', table_src, re.M))

errors, names, cited = [], set(), set()
rows = [l for l in doc.splitlines() if re.match(r"^\|\s*\d+\s*\|", l)]
for line in rows:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 6:
        errors.append(f"row has {len(cells)} cells, expected 6: {line}")
        continue
    num, name, _what, code, fragment, test = cells
    name = name.strip("`")
    if name in names:
        errors.append(f"row {num}: case name '{name}' appears twice")
    names.add(name)
    for c in re.findall(r"[A-Z_]{2,}", code):
        if c not in codes:
            errors.append(f"row {num} ({name}): unknown code {c}")
    test = test.strip("`")
    path, _, func = test.partition("::")
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        errors.append(f"row {num} ({name}): no file {path}")
        continue
    if func:
        src = open(full, encoding="utf-8", errors="replace").read()
        if path == table:
            if func not in table_rows:
                errors.append(f"row {num} ({name}): no table row '{func}' in {path}")
            cited.add(func)
        elif not re.search(r"\bvoid\s+" + re.escape(func) + r"\s*\(", src):
            errors.append(f"row {num} ({name}): no test function {func} in {path}")
        frag = fragment.strip("`").replace("\\|", "|")
        if frag and frag != "-" and frag not in src:
            errors.append(f"row {num} ({name}): '{frag}' does not appear in {path}")
for r in sorted(table_rows - cited):
    errors.append(f"table row '{r}' of {table} is not in the catalogue")
if len(rows) < 100:
    errors.append(f"{len(rows)} rows, expected at least 100")
for e in errors:
    print(e)
print(f"{len(rows)} catalogue rows, {len(table_rows)} table cases, {len(errors)} errors")
sys.exit(1 if errors else 0)
