#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the fuzz targets (preset `fuzz`: clang + libFuzzer + ASan/UBSan),
# seeds each from the generated test models of a host build, and runs each
# for a bounded time. Prints one line per target (executions, corpus size,
# findings) and exits non-zero when any target found something; the inputs
# that failed are left in build/fuzz/findings/<target>/.
# usage: bash tests/fuzz/run.sh [SECONDS_PER_TARGET (default 20)] [HOST_BUILD (default build/host)]
#        FUZZ_TARGETS="kernels session" bash tests/fuzz/run.sh 600   # a longer campaign
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
secs=${1:-20}
host=${2:-build/host}
targets=${FUZZ_TARGETS:-"kernels session onnx container vnpu manifest sealed key_wrap npy path"}
out=build/fuzz
jobs=${FUZZ_BUILD_JOBS:-2}

# The host build's epctx-compile lets the fuzz build's own tests (ctest -L
# memory: fault injection under clang's ASan/LSan) compile their packages.
extra=()
[ -x "$host/host_tools/epctx-compile" ] && extra=(-DEPCTX_HOST_COMPILE="$(cd "$host" && pwd)/host_tools/epctx-compile")
cmake --preset fuzz "${extra[@]}" >/dev/null || { echo "fuzz: configure failed" >&2; exit 1; }
cmake --build "$out" -j"$jobs" --target epctx_fuzzers >"$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log"; echo "fuzz: build failed" >&2; exit 1; }

# seed <target> <find expression...>: copies matching files of the host build
# (the generated models, binaries, manifests, arrays) into the seed folder.
seed() {
  local t=$1 dir=$out/seeds/$1
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  [ -d tests/fuzz/regressions/$t ] && cp tests/fuzz/regressions/$t/* "$dir/" 2>/dev/null
  [ -d "$host" ] || return 0
  find "$host" -type f "$@" -size -1024k -not -path "*/fuzz/*" -print0 2>/dev/null |
    while IFS= read -r -d "" f; do cp "$f" "$dir/$(sha1sum "$f" 2>/dev/null | cut -c1-16)" 2>/dev/null; done
}
seed kernels -name "__none__"
seed session -name "*.onnx"
seed onnx -name "*.onnx"
seed container -name "*.bin"
seed vnpu -name "*.bin"
seed manifest \( -name "*.sig" -o -name "*.manifest" \)
seed sealed -path "*encrypted*" -name "*.bin"
seed key_wrap -name "*.keys"
seed npy -name "*.npy"
seed path -name "__none__"
for p in model_vnpu.bin sub/a.bin ./sub/../model_vnpu.bin inlink outlink outdir/secret.bin \
         ../secret.bin /etc/passwd abslink loop sub//a.bin; do
  printf '%s' "$p" >"$out/seeds/path/$(printf '%s' "$p" | sha1sum | cut -c1-16)"
done

status=0
printf '%-10s %12s %10s %8s %s\n' target executions exec/s corpus findings
for t in $targets; do
  bin=$out/tests/fuzz/fuzz_$t
  corpus=$out/corpus/$t
  findings=$out/findings/$t
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  log=$out/fuzz_$t.log
  # New coverage goes to corpus/ (kept between runs); seeds are read only.
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -print_funcs=0 -artifact_prefix="$findings/" \
    "$corpus" "$out/seeds/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  size=$(find "$corpus" -type f | wc -l)
  found=$(find "$findings" -type f | wc -l)
  printf '%-10s %12s %10s %8s %s\n' "$t" "${runs:-?}" "${rate:-?}" "$size" "$found"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    grep -m3 -E "runtime error|ERROR: |SUMMARY" "$log" | sed 's/^/    /'
  fi
done
[ $status -eq 0 ] && echo "fuzz: no findings" || echo "fuzz: findings in $out/findings (logs $out/fuzz_*.log)"
exit $status
