#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A two-minute tour: build the host tools, compile a small CNN into an
# EPContext model for the vnpu reference NPU, then load and run it on device
# side with epctx-run. Shows that the slow step (compile) happens once on the
# host and the device only pays for session creation.
# usage: bash tests/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tests/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p build
echo "== building epctx-compile and epctx-run (log: build/demo-build.log)"
if ! { cmake --preset host && cmake --build --preset host -j"$jobs" --target epctx-compile epctx-run; } \
    >build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log
  echo "demo: error: build failed (build/demo-build.log)" >&2
  exit 1
fi

bin=build/host
demo=build/demo
rm -rf "$demo"
mkdir -p "$demo"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" tests/models/generate.py "$demo" --only small_cnn

ms() { date +%s%N | cut -b1-13; }
model="$demo/small_cnn/model.onnx"
ctx="$demo/small_cnn_ctx.onnx"
echo
echo "== epctx-compile $model --ep vnpu --embed-mode 0"
t0=$(ms)
"$bin/host_tools/epctx-compile" "$model" -o "$ctx" --ep vnpu --embed-mode 0 --force
compile_ms=$(($(ms) - t0))
echo "compile: ${compile_ms} ms"
ls -l "$demo" | grep -E "_ctx.onnx|\.bin" || true

echo
echo "== epctx-run $ctx --input x=$demo/small_cnn/input_0.npy --output-dir $demo/out"
"$bin/runtime/tools/epctx-run" "$ctx" --input "x=$demo/small_cnn/input_0.npy" \
  --output-dir "$demo/out" --repeat 20 | tee "$demo/run.log"
create_ms=$(sed -nE 's/.*"session_create_ms": ([0-9.]+).*/\1/p' "$demo/run.log")

echo
echo "host compile: ${compile_ms} ms  vs  device session create: ${create_ms} ms"
"$python" - "$demo" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
got = np.load(f"{d}/out/probs.npy")
want = np.load(f"{d}/small_cnn/expected_0.npy")
print("max |epctx - numpy reference| =", float(np.abs(got - want).max()))
EOF
