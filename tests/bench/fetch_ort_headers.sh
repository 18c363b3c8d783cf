#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches ONNX Runtime's C API headers (API version 29, ORT 1.30) from the npm
# registry, pinned by version and sha256, into CACHE_DIR/ort-headers/. The
# onnxruntime-node package ships the library but no headers; the Unity package
# com.github.asus4.onnxruntime carries ORT's official headers in its iOS
# framework (the C API is the same on every platform).
#   CACHE_DIR/com.github.asus4.onnxruntime-0.4.9.tgz   kept: re-runs are offline
#   CACHE_DIR/ort-headers/onnxruntime_c_api.h ...
# usage: fetch_ort_headers.sh CACHE_DIR
# Any failure (network, checksum, missing file) exits non-zero with one line.
set -euo pipefail

die() { echo "fetch_ort_headers.sh: error: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: fetch_ort_headers.sh CACHE_DIR"
command -v npm >/dev/null || die "npm not found (apt-get install npm)"
cache=$(mkdir -p "$1" && cd "$1" && pwd)

spec=com.github.asus4.onnxruntime@0.4.9
tgz=com.github.asus4.onnxruntime-0.4.9.tgz
sha=e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d
inner='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
api_version=29

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

if ! sha_ok "$cache/$tgz" "$sha"; then
  rm -f "$cache/$tgz"
  npm pack --silent "$spec" --pack-destination "$cache" >/dev/null 2>"$cache/npm-pack-headers.log" ||
    die "npm pack $spec failed: $(grep -m1 -i err "$cache/npm-pack-headers.log" || tail -n1 "$cache/npm-pack-headers.log")"
  [ -f "$cache/$tgz" ] || die "npm pack $spec did not produce $tgz"
  sha_ok "$cache/$tgz" "$sha" ||
    die "$tgz: sha256 $(sha256sum "$cache/$tgz" | cut -d' ' -f1), expected $sha"
fi

out="$cache/ort-headers"
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
tar -xzmf "$cache/$tgz" -C "$out.tmp" --strip-components=7 "$inner" || die "$tgz has no $inner"
grep -q "^#define ORT_API_VERSION $api_version\$" "$out.tmp/onnxruntime_c_api.h" ||
  die "$tgz: onnxruntime_c_api.h is not API version $api_version"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "fetch_ort_headers.sh: ONNX Runtime C API $api_version headers ready in $out"
