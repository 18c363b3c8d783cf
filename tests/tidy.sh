#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-tidy (the top-level .clang-tidy: naming, bugprone, performance) over
# the C++ translation units of a configured and built CMake tree (default
# build/host, whose compile_commands.json and flatc headers it reads): every
# tracked .cc under runtime/, hal/ and host_tools/ (the code that ships) that
# the tree compiles, and the repository headers they include. Any finding
# fails. Not checked by default: tests/ (about 4 more CPU-minutes; pass its
# files to check them) and the C sources (CLIs, C API tests: C naming).
# Cost: about 3.6 CPU-minutes, under 2 minutes on 2 idle cores (TIDY_JOBS,
# default nproc, parallel clang-tidy processes).
# usage: bash tests/tidy.sh [BUILD_DIR] [FILE...]   (FILE: only these sources)
#        bash tests/tidy.sh build/host $(git ls-files 'tests/*.cc')
#        CLANG_TIDY=clang-tidy-14 TIDY_JOBS=2 bash tests/tidy.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

build=${1:-build/host}
[ $# -gt 0 ] && shift
ct=${CLANG_TIDY:-clang-tidy}
jobs=${TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}
command -v "$ct" >/dev/null || { echo "tidy: error: $ct not found" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] ||
  { echo "tidy: error: no $build/compile_commands.json (cmake --preset host first)" >&2; exit 1; }

# The database without the GCC-only flags clang rejects, and without
# -Werror: compiler warnings are the build's to report (with GCC), not
# clang-tidy's.
db=$build/tidy
mkdir -p "$db"
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'EOF'
import json, shlex, sys
dropped = {"-fno-tree-loop-distribute-patterns", "-Werror"}
entries = json.load(open(sys.argv[1]))
for e in entries:
    args = e.pop("arguments", None) or shlex.split(e.pop("command"))
    e["arguments"] = [a for a in args if a not in dropped]
json.dump(entries, open(sys.argv[2], "w"), indent=1)
EOF

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(python3 - "$db/compile_commands.json" "$root" <<'EOF'
import json, os, subprocess, sys
db, root = sys.argv[1], sys.argv[2]
built = {os.path.relpath(os.path.join(e["directory"], e["file"]), root)
         for e in json.load(open(db))}
tracked = subprocess.run(["git", "ls-files", "--", "runtime", "hal", "host_tools"],
                         capture_output=True, text=True, check=True).stdout.split()
for f in tracked:
    if f.endswith(".cc") and f in built:
        print(f)
EOF
)
fi
[ ${#files[@]} -gt 0 ] || { echo "tidy: error: no sources to check" >&2; exit 1; }

log=$db/tidy.log
t0=$(date +%s)
rc=0
printf '%s\0' "${files[@]}" |
  xargs -0 -n 4 -P "$jobs" "$ct" -p "$db" --quiet \
    --header-filter="^$root/(runtime|hal|host_tools|boards|tests)/" >"$log" 2>&1 || rc=$?
findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u || true)
if [ -n "$findings" ] || [ $rc -ne 0 ]; then
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Use -system-headers' "$log" >&2 || true
  echo "tidy: $(grep -c . <<<"$findings") finding(s) in ${#files[@]} files ($(($(date +%s) - t0)) s); see $log" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean ($(($(date +%s) - t0)) s)"
