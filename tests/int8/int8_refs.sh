#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fixture of test_int8_models: writes the quantised test models
# (gen_int8_models.py, python3-onnx 1.12) into WORK_DIR and ONNX Runtime's
# outputs for them (ort_int8.js, onnxruntime-node from the tests/real cache).
# usage: int8_refs.sh PYTHON NODE CACHE_DIR WORK_DIR
set -euo pipefail
die() { echo "int8_refs.sh: error: $*" >&2; exit 1; }
[ $# -eq 4 ] || die "usage: int8_refs.sh PYTHON NODE CACHE_DIR WORK_DIR"
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$4" && mkdir -p "$4"
"$1" "$here/gen_int8_models.py" "$4" || die "gen_int8_models.py failed"
"$2" "$here/ort_int8.js" "$3" "$4" || die "ort_int8.js failed"
