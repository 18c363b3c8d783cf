#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian/Ubuntu packages epctx needs, and nothing when they are
# all there already (the common case on a dev machine: no apt, no sudo).
# usage: bash tests/setup-deps.sh [--cross]
#   --cross  also the aarch64, armhf and riscv64 cross toolchains, qemu-user,
#            the arm64 and armhf libraries (dpkg --add-architecture), the
#            riscv64 ones built from Debian's sources (tests/setup-riscv64.sh),
#            and for the bare-metal board (boards/mps3-an547) gcc-arm-none-eabi,
#            picolibc, qemu-system-arm and mbedtls's source (see mbedtls_source)
# Run (with bash) by run-all.sh and demo.sh; exits non-zero when apt fails.
set -euo pipefail

cross=0
[ "${1:-}" = "--cross" ] && cross=1

host_pkgs=(build-essential cmake python3 python3-onnx python3-numpy libonnx-dev
  python3-torch python3-torchvision
  libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler
  libmbedtls-dev libcmocka-dev clang libclang-rt-14-dev)
# epctx-ocr (runtime/tools/ocr): image reading and writing; the demo's and
# the OCR test's picture (tests/ocr/render_text.py) and the test's JSON.
host_pkgs+=(libstb-dev python3-pil fonts-dejavu-core fonts-wqy-microhei libcjson-dev)
# The Python package epctx (host_tools/python): pybind11 and Python's headers
# to build it, pytest to run tests/python.
host_pkgs+=(pybind11-dev python3-dev python3-pytest)
# tests/format.sh and tests/tidy.sh (CI checks; .clang-format and .clang-tidy
# are written for Debian 12's clang-format and clang-tidy 14).
host_pkgs+=(clang-format clang-tidy)
# tests/run-all.sh: the host and host-nodrivers presets share most objects.
host_pkgs+=(ccache)
# XNNPACK only for the benchmark that compares our SGEMM with it
# (tests/bench/xnnpack_sgemm.cc); the runtime never links it.
host_pkgs+=(libxnnpack-dev libpthreadpool-dev)
# Node.js may come from elsewhere (NodeSource's nodejs bundles npm and
# conflicts with Debian's npm): only ask apt when the commands are missing.
command -v node >/dev/null || host_pkgs+=(nodejs)
command -v npm >/dev/null || host_pkgs+=(npm)
cross_pkgs=(qemu-user g++-aarch64-linux-gnu g++-arm-linux-gnueabihf g++-riscv64-linux-gnu
  dpkg-dev)
arm64_pkgs=(libcmocka-dev:arm64 libflatbuffers-dev:arm64 libmbedtls-dev:arm64)
baremetal_pkgs=(gcc-arm-none-eabi libstdc++-arm-none-eabi-picolibc picolibc-arm-none-eabi
  qemu-system-arm)

armhf_pkgs=(libcmocka-dev:armhf libflatbuffers-dev:armhf libmbedtls-dev:armhf)

wanted=("${host_pkgs[@]}")
[ $cross -eq 1 ] && wanted+=("${cross_pkgs[@]}" "${arm64_pkgs[@]}" "${armhf_pkgs[@]}"
                             "${baremetal_pkgs[@]}")
# riscv64-linux: Debian 12 has no riscv64 architecture; built from source.
riscv64() { [ $cross -eq 0 ] || bash "$(dirname "${BASH_SOURCE[0]}")/setup-riscv64.sh"; }

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  SUDO=(false)  # only an error when something must be installed
fi
APT_TAG=setup-deps
. "$(dirname "${BASH_SOURCE[0]}")/apt_retry.sh"

# The bare-metal board builds libmbedcrypto itself, with its own config
# (boards/baremetal.cmake): Debian's source package of the installed
# libmbedtls-dev, unpacked once into /usr/local/src/mbedtls-<version>. The
# deb-src entries, when missing, are made from the machine's own deb entries.
mbedtls_source() {
  local ver srcver dir tmp
  ver=$(dpkg-query -W -f='${source:Upstream-Version}\n' libmbedtls-dev | head -n1)
  srcver=$(dpkg-query -W -f='${source:Version}\n' libmbedtls-dev | head -n1)
  dir=/usr/local/src/mbedtls-$ver
  [ -f "$dir/library/ecdsa.c" ] && return 0
  echo "setup-deps: unpacking Debian's mbedtls $srcver source into $dir"
  if [ "${SUDO[*]}" = false ]; then
    echo "setup-deps: error: need root or sudo to write $dir" >&2
    return 1
  fi
  if [ -z "$(apt-cache showsrc mbedtls 2>/dev/null)" ]; then
    local stanzas lines
    stanzas=$(for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && grep -qx 'Types: deb' "$f" && sed 's/^Types: deb$/Types: deb-src/' "$f" && echo
    done) || true
    lines=$(for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f"
    done | grep -v 'arch=arm64') || true
    [ -z "$stanzas" ] ||
      printf '%s\n' "$stanzas" | "${SUDO[@]}" tee /etc/apt/sources.list.d/epctx-src.sources >/dev/null
    [ -z "$lines" ] ||
      printf '%s\n' "$lines" | "${SUDO[@]}" tee /etc/apt/sources.list.d/epctx-src.list >/dev/null
    apt_update
  fi
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt fetches as its own user
  (cd "$tmp" && { apt-get source -q --download-only "mbedtls=$srcver" ||
                  apt-get source -q --download-only mbedtls; }) || return 1
  "${SUDO[@]}" mkdir -p "$dir" &&
    "${SUDO[@]}" tar -xzf "$tmp"/mbedtls_*.orig.tar.gz -C "$dir" --strip-components=1 || return 1
  rm -rf "$tmp"
}

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#wanted[@]} packages already installed"
  [ $cross -eq 0 ] || mbedtls_source || exit 1
  riscv64
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"

if [ "${SUDO[*]}" = false ]; then
  echo "setup-deps: error: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

foreign_missing() {
  local a
  for a in arm64 armhf; do dpkg --print-foreign-architectures | grep -qx $a || return 0; done
  return 1
}
if [ $cross -eq 1 ] && foreign_missing; then
  . /etc/os-release
  if [ "${ID:-}" = "ubuntu" ]; then
    # Ubuntu serves arm64 from ports.ubuntu.com, not from the amd64 mirrors:
    # pin the existing sources to amd64 and add the ports archive for arm64.
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] && "${SUDO[@]}" sed -i -E '/^deb /{/\[arch=/!s/^deb /deb [arch=amd64] /}' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && ! grep -q '^Architectures:' "$f" &&
        "${SUDO[@]}" sed -i -E 's/^(Types:.*)$/\1\nArchitectures: amd64/' "$f"
    done
    codename=${UBUNTU_CODENAME:-$VERSION_CODENAME}
    printf 'deb [arch=arm64,armhf] http://ports.ubuntu.com/ubuntu-ports %s main universe\ndeb [arch=arm64,armhf] http://ports.ubuntu.com/ubuntu-ports %s-updates main universe\n' \
      "$codename" "$codename" | "${SUDO[@]}" tee /etc/apt/sources.list.d/epctx-arm64-ports.list >/dev/null
  fi
  "${SUDO[@]}" dpkg --add-architecture arm64
  "${SUDO[@]}" dpkg --add-architecture armhf
fi

export DEBIAN_FRONTEND=noninteractive
apt_update
apt_retry "${SUDO[@]}" apt-get install -y -q -o Acquire::Retries=3 --no-install-recommends "${missing[@]}"
[ $cross -eq 0 ] || mbedtls_source
riscv64
