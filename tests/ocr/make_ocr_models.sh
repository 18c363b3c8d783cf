#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles PP-OCRv4's models (fetched by tests/real/fetch_models.sh into
# CACHE/models) into the folder epctx-ocr reads, for vnpu:
#   OUT/det_ctx.onnx   detection, input fixed at 1x3x640x640
#   OUT/cls_ctx.onnx   angle classifier, 1x3x48x192
#   OUT/rec_ctx.onnx, OUT/rec_<W>_ctx.onnx   the recogniser at each width of
#                      REC_WIDTHS, one weight-sharing group: one context
#                      binary (rec_vnpu.bin) holds the weights once
#   OUT/keys.txt       the recogniser's dictionary
# usage: [REC_WIDTHS=W1,W2,..] make_ocr_models.sh CACHE OUT EPCTX_COMPILE [PYTHON]
# Prints each compile's time; any failure exits non-zero with one line.
set -euo pipefail
die() { echo "make_ocr_models.sh: error: $*" >&2; exit 1; }
[ $# -ge 3 ] || die "usage: make_ocr_models.sh CACHE OUT EPCTX_COMPILE [PYTHON]"
cache=$1 out=$2 compile=$3 python=${4:-/usr/bin/python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REC_WIDTHS=${REC_WIDTHS:-320,480,640,800,960,1280}
models=$cache/models
for f in ocr_det.onnx ocr_cls.onnx ocr_rec.onnx ocr_keys.txt; do
  [ -s "$models/$f" ] || die "$models/$f missing (run tests/real/fetch_models.sh $cache)"
done
rm -rf "$out"
mkdir -p "$out"
ms() { date +%s%N | cut -b1-13; }
t0=$(ms)
"$compile" "$models/ocr_det.onnx" -o "$out/det_ctx.onnx" --input-shape x:1,3,640,640 --quiet ||
  die "compiling the detection model failed"
t1=$(ms)
"$compile" "$models/ocr_cls.onnx" -o "$out/cls_ctx.onnx" --input-shape x:1,3,48,192 --quiet ||
  die "compiling the angle classifier failed"
t2=$(ms)
"$python" "$here/rec_widths.py" "$models/ocr_rec.onnx" "$out" "$REC_WIDTHS"
group=
for w in ${REC_WIDTHS//,/ }; do
  [ -z "$group" ] && group=$out/rec.onnx || group=$group,$out/rec_$w.onnx
done
"$compile" "$group" --quiet || die "compiling the recogniser group failed"
t3=$(ms)
rm -f "$out"/rec.onnx "$out"/rec_*[0-9].onnx
cp "$models/ocr_keys.txt" "$out/keys.txt"
echo "compile on the host: det $((t1 - t0)) ms, cls $((t2 - t1)) ms," \
  "rec at widths $REC_WIDTHS $((t3 - t2)) ms (one shared context binary)"
