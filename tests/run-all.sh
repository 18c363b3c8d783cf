#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test run, as on a fresh Debian 12 / Ubuntu machine:
#   1. installs the packages (tests/setup-deps.sh --cross; skipped when present)
#      and checks the formatting (tests/format.sh: clang-format)
#   2. host preset: configure, build, ctest (unit, e2e, real models vs ORT)
#   3. host-nodrivers preset: the same with no built-in NPU driver
#      (EPCTX_DRIVERS empty): the runtime, host tools and CPU-only tests build
#      and pass without vnpu
#   4. host-tsan preset: the threading test under ThreadSanitizer (uses the
#      host build's epctx-compile)
#   5. host-asan preset: every host test again under AddressSanitizer + UBSan
#      (its node suite runs the host preset's packages, as do the cross ones)
#   6. aarch64-linux, armhf-linux, riscv64-linux presets: cross builds, ctest
#      under qemu-aarch64 / qemu-arm / qemu-riscv64
#   7. mps3-an547 preset: bare-metal Cortex-M55 images (a signed package
#      compiled by the host build's tools) under qemu-system-arm
#   8. clang-tidy over the C++ the host build compiles (tests/tidy.sh)
#   9. size-<target> presets: the runtime's size per part and target
#      (tests/size), failing when a part grows past tests/size/budget.txt
#  10. fuzz preset: every libFuzzer target for FUZZ_SECONDS (default 20) each,
#      seeded from the host build's generated models (tests/fuzz/run.sh)
# Every preset builds with warnings as errors (CMakePresets.json, ci-base).
# Ends with the ONNX node suite's pass counts per preset ("node suite: none
# N/898, vnpu M/898 (host)", tests/conformance/README.md) and "N passed, N
# failed" (tests over all presets; a configure, build, format or tidy step
# that fails counts as one failure) and exits non-zero if anything failed.
# usage: bash tests/run-all.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=$(nproc 2>/dev/null || echo 2)
export CCACHE_DIR=$PWD/build/ccache CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
passed=0
failed=0
failures=()
failed_tests=()  # "<preset> <test>" per failed ctest test
logdir=build/logs
start=$(date +%s)

if ! bash tests/setup-deps.sh --cross; then
  echo "run-all: error: installing packages failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
mkdir -p "$logdir"

step() {  # step <label> <command...>: runs, counts a failure if it fails
  local label=$1
  shift
  echo "== $label: $*"
  if ! "$@"; then
    failed=$((failed + 1))
    failures+=("$label")
    return 1
  fi
}

run_ctest() {  # run_ctest <preset>: runs ctest, adds its pass/fail counts
  local preset=$1 log="$logdir/ctest-$1.log"
  # The sanitizer and cross presets' node suites run the packages the host
  # preset's suite compiled a moment before (test_node_suite.c,
  # EPCTX_NODE_SUITE_PACKAGES): compiling 2 x 898 models again per preset
  # was a fifth of the whole run, and their runtime is what they test.
  local packages=""
  [[ "$preset" = host-asan || "$preset" = *-linux ]] &&
    packages=$PWD/build/host/tests/conformance/work
  echo "== $preset: ctest --preset $preset -j$jobs${packages:+ (node suite packages: $packages)}"
  EPCTX_NODE_SUITE_PACKAGES=$packages ctest --preset "$preset" -j"$jobs" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local summary total bad
  summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -n1)
  if [ -z "$summary" ]; then
    failed=$((failed + 1))
    failures+=("$preset: ctest produced no summary (rc $rc)")
    return
  fi
  bad=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
  passed=$((passed + total - bad))
  failed=$((failed + bad))
  if [ "$bad" -ne 0 ]; then
    failures+=("$preset: $bad test(s), see $log")
    # The names, so the end of the run (all CI shows) says which.
    local name
    while read -r name; do
      failures+=("  $preset: $name")
      failed_tests+=("$preset $name")
    done < <(sed -n '/The following tests FAILED:/,$p' "$log" |
      sed -nE 's/^[[:space:]]*[0-9]+ - ([^ ]+) .*/\1/p')
  fi
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    failed=$((failed + 1))
    failures+=("$preset: ctest exited $rc")
  fi
}

node_suite_lines=()
node_suite_line() {  # node_suite_line <preset>: collects the node suite's totals
  local preset=$1 parts=() ep f line joined
  for ep in none vnpu; do
    f=build/$preset/tests/conformance/work/$ep/summary.txt
    [ -f "$f" ] || continue
    line=$(sed -n 's/^node suite: //p' "$f" | tail -n1)
    [ -n "$line" ] && parts+=("$line")
  done
  [ ${#parts[@]} -gt 0 ] || return 0
  joined=$(printf '%s, ' "${parts[@]}")
  node_suite_lines+=("node suite: ${joined%, } ($preset)")
}

t0=$(date +%s)
step "format" bash tests/format.sh
echo "== format: $(($(date +%s) - t0)) s"

for preset in host host-nodrivers host-tsan host-asan aarch64-linux armhf-linux riscv64-linux mps3-an547; do
  rm -f build/"$preset"/tests/conformance/work/*/summary.txt
  extra=()
  t0=$(date +%s)
  # The cross runtimes also run the generated models, compiled by the host
  # build's epctx-compile (an x86_64 child of the emulated test).
  [[ "$preset" = *-linux ]] && extra=(-DEPCTX_HOST_COMPILE="$PWD/build/host/host_tools/epctx-compile")
  # host-nodrivers compiles three quarters of its objects with the host
  # preset's flags: through ccache (build/ccache, paths relative to the
  # checkout) it takes them from the host build instead.
  [[ "$preset" = host || "$preset" = host-nodrivers ]] &&
    extra=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  step "$preset configure" cmake --preset "$preset" "${extra[@]}" &&
    step "$preset build" cmake --build --preset "$preset" -j"$jobs" &&
    run_ctest "$preset"
  [[ "$preset" = host-nodrivers ]] && ccache --show-stats 2>/dev/null | grep -iE "hit|miss" | head -4
  node_suite_line "$preset"
  echo "== $preset: $(($(date +%s) - t0)) s"
done

# clang-tidy reads the host build's compile_commands.json and generated headers.
t0=$(date +%s)
step "tidy" bash tests/tidy.sh build/host
echo "== tidy: $(($(date +%s) - t0)) s"

# Size per target: each build ends by printing its report (and fails over budget).
t0=$(date +%s)
rm -f build/size-*/tests/size/size_report.txt
for target in x86_64 aarch64 armhf riscv64; do
  step "size-$target configure" cmake --preset "size-$target" >/dev/null &&
    step "size-$target build" cmake --build --preset "size-$target" -j"$jobs" >"$logdir/size-$target.log" 2>&1 ||
    cat "$logdir/size-$target.log" 2>/dev/null
done
cat build/size-*/tests/size/size_report.txt 2>/dev/null
echo "== size reports: $(($(date +%s) - t0)) s"

step "fuzz" bash tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" build/host

elapsed=$(($(date +%s) - start))
echo
echo "run-all: finished in $((elapsed / 60)) min $((elapsed % 60)) s"
for l in "${node_suite_lines[@]+"${node_suite_lines[@]}"}"; do echo "$l"; done
# The tail of each failed test's output, last, where a truncated CI log keeps it.
for t in "${failed_tests[@]+"${failed_tests[@]}"}"; do
  read -r p n <<<"$t"
  echo "---- $p: $n (last 40 lines of its output in $logdir/ctest-$p.log) ----"
  awk -v n="$n" '$0 ~ "Test +#[0-9]+: " n " " && $0 !~ "Passed" {on = 1; print; next}
    on && /^ *[0-9]+\/[0-9]+ Test +#/ {on = 0}
    on && /^[0-9]+% tests passed/ {on = 0}
    on {print}' "$logdir/ctest-$p.log" | tail -n 40
done
for f in "${failures[@]+"${failures[@]}"}"; do echo "  FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
