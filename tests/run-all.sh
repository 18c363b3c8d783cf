#!/usr/bin/env bash
# The whole test run, as on a fresh Debian 12 / Ubuntu machine:
#   1. installs the packages (tests/setup-deps.sh --cross; skipped when present)
#   2. host preset: configure, build, ctest (unit, e2e, real models vs ORT)
#   3. host-tsan preset: the threading test under ThreadSanitizer (uses the
#      host build's epctx-compile)
#   4. host-asan preset: every host test again under AddressSanitizer + UBSan
#   5. aarch64-linux preset: cross build, ctest under qemu-aarch64
#   6. fuzz preset: every libFuzzer target for FUZZ_SECONDS (default 20) each,
#      seeded from the host build's generated models (tests/fuzz/run.sh)
# Ends with "N passed, N failed" (tests over all presets; a configure or
# build step that fails counts as one failure) and exits non-zero if anything
# failed.
# usage: bash tests/run-all.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failures=()
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
  echo "== $preset: ctest --preset $preset -j$jobs"
  ctest --preset "$preset" -j"$jobs" 2>&1 | tee "$log"
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
  [ "$bad" -eq 0 ] || failures+=("$preset: $bad test(s), see $log")
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    failed=$((failed + 1))
    failures+=("$preset: ctest exited $rc")
  fi
}

for preset in host host-tsan host-asan aarch64-linux; do
  extra=()
  # The aarch64 runtime also runs the generated models, compiled by the host
  # build's epctx-compile (an x86_64 child of the emulated test).
  [ "$preset" = aarch64-linux ] && extra=(-DEPCTX_HOST_COMPILE="$PWD/build/host/host_tools/epctx-compile")
  step "$preset configure" cmake --preset "$preset" "${extra[@]}" &&
    step "$preset build" cmake --build --preset "$preset" -j"$jobs" &&
    run_ctest "$preset"
done

step "fuzz" bash tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" build/host

elapsed=$(($(date +%s) - start))
echo
echo "run-all: finished in $((elapsed / 60)) min $((elapsed % 60)) s"
for f in "${failures[@]+"${failures[@]}"}"; do echo "  FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
