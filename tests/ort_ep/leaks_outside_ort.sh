#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a test under LeakSanitizer and fails on any leak with a frame outside
# libonnxruntime. ORT 1.30 itself leaks 14 bytes at exit (also in a CPU-only
# session without the EP; its only frame is inside libonnxruntime), and an
# LSan suppression naming ORT would also hide the EP's leaks, whose stacks
# pass through ORT's callers.
# usage: leaks_outside_ort.sh TEST [ARGS...]
log=$(mktemp) || exit 1
LSAN_OPTIONS="exitcode=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" "$@" 2>"$log"
rc=$?
cat "$log" >&2
if [ "$rc" -eq 0 ] && ! awk '
  /^(Direct|Indirect) leak/ { in_leak = 1; next }
  /^$/ { in_leak = 0 }
  in_leak && /^ *#[0-9]+ / && $1 != "#0" && $0 !~ /libonnxruntime\.so/ { bad = 1 }
  END { exit bad }' "$log"; then
  echo "leaks_outside_ort.sh: a leak has frames outside libonnxruntime (above)" >&2
  rc=1
fi
rm -f "$log"
exit "$rc"
