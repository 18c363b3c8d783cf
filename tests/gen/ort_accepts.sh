#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ORT accepts our output: compiles every tests/models case with embed_mode 0
# and with embed_mode 1 + a node name prefix, adds every ctx model the gen_*
# tests listed (work/*/ctx_models.txt: embed 0/1, prefixes, merged models,
# weight-sharing groups, external initializers), then runs them all through
# the onnx checker and ONNX Runtime 1.30 (ort_accepts.js); every case also
# compiled with --ep none, and every case of which vnpu takes nothing (written
# all-CPU), must run in ORT exactly like its source. A control model
# with a wrongly typed EPContext attribute must be rejected by ORT's schema
# check, which shows the accepted ones passed it.
# usage: ort_accepts.sh EPCTX_COMPILE MODELS_DIR WORK_DIR CACHE_DIR NODE PYTHON
set -euo pipefail
die() { echo "ort_accepts.sh: error: $*" >&2; exit 1; }
[ $# -eq 6 ] || die "usage: ort_accepts.sh EPCTX_COMPILE MODELS_DIR WORK_DIR CACHE_DIR NODE PYTHON"
tool=$1 models=$2 work=$3 cache=$4 node=$5 python=$6
here=$(cd "$(dirname "$0")" && pwd)
out="$work/ort"
rm -rf "$out" && mkdir -p "$out"
list="$out/list.txt"
: >"$list"

compiled=0
while read -r case; do
  [ -n "$case" ] || continue
  for variant in e0 e1; do
    dir="$out/$case/$variant"
    mkdir -p "$dir"
    cp "$models/$case/model.onnx" "$dir/$case.onnx"
    if [ $variant = e0 ]; then
      "$tool" --quiet "$dir/$case.onnx" >"$dir/log" 2>&1 || die "$case $variant: $(tail -n1 "$dir/log")"
    else
      "$tool" --quiet "$dir/$case.onnx" --embed-mode 1 --prefix "P_${case}_" >"$dir/log" 2>&1 ||
        die "$case $variant: $(tail -n1 "$dir/log")"
    fi
    if grep -q "every node runs on the CPU" "$dir/log"; then
      # Nothing for vnpu: a CPU-only model, which ORT must run like the source.
      echo "same $dir/${case}_ctx.onnx $models/$case" >>"$list"
    elif [ -f "$dir/${case}_ctx.onnx" ]; then
      echo "accept $dir/${case}_ctx.onnx" >>"$list"
      compiled=$((compiled + 1))
    fi
  done
  # CPU-only output (--ep none): ORT must run it and give exactly the source
  # model's outputs, so the raw_data alignment padding changes nothing.
  dir="$out/$case/none"
  mkdir -p "$dir"
  cp "$models/$case/model.onnx" "$dir/$case.onnx"
  "$tool" --quiet --ep none "$dir/$case.onnx" >"$dir/log" 2>&1 || die "$case none: $(tail -n1 "$dir/log")"
  echo "same $dir/${case}_ctx.onnx $models/$case" >>"$list"
done <"$models/cases.txt"
[ $compiled -gt 0 ] || die "no tests/models case compiled"

from_tests=0
for f in "$work"/*/ctx_models.txt; do
  [ -f "$f" ] || continue
  while read -r p; do
    [ -n "$p" ] || continue
    [ -f "$p" ] || die "listed by $f but missing: $p"
    echo "accept $p" >>"$list"
    from_tests=$((from_tests + 1))
  done <"$f"
done
[ $from_tests -gt 0 ] || die "no ctx models listed under $work/*/ctx_models.txt (run the gen_* tests first)"

# The control: embed_mode as a STRING attribute.
first=$(awk 'NR==1{print $2}' "$list")
"$python" - "$first" "$out/control_bad_attribute_type.onnx" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
for n in m.graph.node:
    if n.op_type == "EPContext":
        for a in n.attribute:
            if a.name == "embed_mode":
                a.type = onnx.AttributeProto.STRING
                a.ClearField("i")
                a.s = b"0"
onnx.save(m, sys.argv[2])
PY

# onnx checker (full model check, external data read from beside the model).
"$python" - "$list" <<'PY' || die "onnx checker rejected a generated model"
import sys, onnx
paths = [l.split(" ")[1].strip() for l in open(sys.argv[1]) if l.strip()]
for p in paths:
    onnx.checker.check_model(p)
print("ort_accepts: onnx %s checker passed %d models" % (onnx.__version__, len(paths)))
PY

echo "reject $out/control_bad_attribute_type.onnx" >>"$list"
echo "ort_accepts: $compiled from tests/models (embed 0 and 1 + prefix), $from_tests from the gen tests"
"$node" "$here/ort_accepts.js" "$cache" "$list"
