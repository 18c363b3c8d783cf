#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-format over every C/C++ source and header git tracks under runtime/,
# hal/, host_tools/, boards/ and tests/ (.c .cc .cpp .h .hpp .inc), with the
# top-level .clang-format. Fails listing the files that are not formatted.
# usage: bash tests/format.sh          check (what CI runs)
#        bash tests/format.sh --fix    rewrite the files in place
#        CLANG_FORMAT=clang-format-14 bash tests/format.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "format: error: $cf not found" >&2; exit 1; }
# Other releases lay some constructs out differently: the files are kept as
# clang-format 14 (Debian 12's) writes them.
"$cf" --version | grep -q ' 14\.' ||
  echo "format: warning: $("$cf" --version | head -n1) is not clang-format 14; differences may be the version's" >&2

mapfile -t files < <(git ls-files -- runtime hal host_tools boards tests |
  grep -E '\.(c|cc|cpp|h|hpp|inc)$')
if [ "${1:-}" = "--fix" ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 40 -P 2 "$cf" -i --style=file
  echo "format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run -Werror --style=file "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  printf 'format: not clang-format clean: %s\n' "${bad[@]}" >&2
  echo "format: ${#bad[@]} of ${#files[@]} files differ; bash tests/format.sh --fix rewrites them" >&2
  exit 1
fi
echo "format: ${#files[@]} files clean"
