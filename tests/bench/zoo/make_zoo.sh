#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the model zoo (README.md beside this file) in ZOO_DIR: the torch
# models (gen_torch_models.py), their quantized versions
# (gen_quant_models.py), the GEMM shapes (gen_gemm_models.py), the npm
# models copied from the real-models cache, then every chosen model's input
# and ONNX Runtime's outputs (tests/real/ort_reference.js, with ORT from the
# cache). Models already made are kept; references are remade.
# usage: make_zoo.sh PYTHON NODE CACHE_DIR ZOO_DIR quick|all
#   quick: the entries of zoo.json marked quick (CI's subset); all: every one.
# Writes ZOO_DIR/ref/<set>.txt, the names made (quick.txt or all.txt).
# CACHE_DIR is the real-models cache after tests/real/fetch_models.sh.
# Any failure: one line "make_zoo.sh: error: ..." and a non-zero exit.
set -euo pipefail
die() { echo "make_zoo.sh: error: $*" >&2; exit 1; }
[ $# -eq 5 ] || die "usage: make_zoo.sh PYTHON NODE CACHE_DIR ZOO_DIR quick|all"
py=$1 node=$2 cache=$3 zoo=$4 set=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
json=$here/zoo.json
[ "$set" = quick ] || [ "$set" = all ] || die "set must be quick or all, found '$set'"

# name source, one a line, of the chosen set
list=$("$py" - "$json" "$set" <<'PY'
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    if sys.argv[2] == "all" or m.get("quick"):
        print(m["name"], m["source"])
PY
) || die "$json: unreadable"
names() { awk -v s="$1" '$2 == s {print $1}' <<<"$list" | paste -sd, -; }

mkdir -p "$zoo/models" "$zoo/ref"
torch=$(names torch)
if [ -n "$torch" ]; then
  "$py" "$here/gen_torch_models.py" "$zoo" --models "$torch" 2>"$zoo/gen_torch.log" ||
    die "$(grep -m1 'error:' "$zoo/gen_torch.log" || tail -n1 "$zoo/gen_torch.log")"
fi
quant=$(names quant)
if [ -n "$quant" ]; then
  "$py" "$here/gen_quant_models.py" "$zoo" --models "$quant" 2>"$zoo/gen_quant.log" ||
    die "$(grep -m1 'error:' "$zoo/gen_quant.log" || tail -n1 "$zoo/gen_quant.log")"
fi
[ -z "$(names gemm)" ] || "$py" "$here/gen_gemm_models.py" "$zoo"
for n in $(names npm | tr , ' '); do
  [ -f "$cache/models/$n.onnx" ] || die "$cache/models/$n.onnx missing (tests/real/fetch_models.sh)"
  cmp -s "$cache/models/$n.onnx" "$zoo/models/$n.onnx" || cp "$cache/models/$n.onnx" "$zoo/models/$n.onnx"
done
all=$(awk '{print $1}' <<<"$list" | paste -sd, -)
"$node" "$here/../../real/ort_reference.js" "$cache" "$zoo" "$json" "$all" >"$zoo/ort_reference.log" 2>&1 ||
  die "$(tail -n1 "$zoo/ort_reference.log")"
awk '{print $1}' <<<"$list" >"$zoo/ref/$set.txt"
echo "make_zoo.sh: $(wc -l <"$zoo/ref/$set.txt") models ready in $zoo ($set)"
