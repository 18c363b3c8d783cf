#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""README.md's list of CPU kernels, generated from runtime/src/kernels/ops.inc.
usage: readme_ops.py REPO_ROOT           check: exit 1 when the list is stale
       readme_ops.py REPO_ROOT --write   rewrite it
The list is the Status bullet starting "- CPU kernels", up to the next bullet."""
import re
import sys
import textwrap

LEAD = "- CPU kernels"


def kernel_ops(ops_inc):
    default, other = set(), {}
    for line in open(ops_inc):
        m = re.match(r'^EPCTX_CPU_OP(?:_PREPARED)?\("([^"]*)", (\w+),', line)
        if not m:
            continue
        domain, op = m.groups()
        if domain:
            other.setdefault(domain, set()).add(op)
        else:
            default.add(op)
    return default, other


def bullet(default, other):
    count = len(default) + sum(len(v) for v in other.values())
    text = ("%s (%d ops, generated from `runtime/src/kernels/ops.inc` by "
            "`tests/selective/readme_ops.py --write`): %s" %
            (LEAD, count, " ".join(sorted(default))))
    for domain in sorted(other):
        text += "; domain `%s`: %s" % (domain, " ".join(sorted(other[domain])))
    lines = textwrap.wrap(text + ".", width=80, subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False)
    return [l + "\n" for l in lines]


def main():
    root = sys.argv[1]
    write = "--write" in sys.argv[2:]
    readme = root + "/README.md"
    lines = open(readme).readlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(LEAD)), None)
    if start is None:
        print("%s: no line starting '%s'" % (readme, LEAD))
        return 1
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    want = bullet(*kernel_ops(root + "/runtime/src/kernels/ops.inc"))
    if lines[start:end] == want:
        return 0
    if write:
        lines[start:end] = want
        open(readme, "w").writelines(lines)
        return 0
    print("%s:%d: the list of CPU kernels differs from runtime/src/kernels/ops.inc; "
          "run tests/selective/readme_ops.py . --write" % (readme, start + 1))
    print("expected:\n" + "".join(want))
    return 1


if __name__ == "__main__":
    sys.exit(main())
