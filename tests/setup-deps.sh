#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages epctx needs, and nothing when they are
# all there already (the common case on a dev machine: no apt, no sudo).
# usage: bash tests/setup-deps.sh [--cross]
#   --cross  also the aarch64 cross toolchain, qemu-user and the arm64
#            libraries (dpkg --add-architecture arm64)
# Run (with bash) by run-all.sh and demo.sh; exits non-zero when apt fails.
set -euo pipefail

cross=0
[ "${1:-}" = "--cross" ] && cross=1

host_pkgs=(build-essential cmake python3 python3-onnx python3-numpy libonnx-dev
  libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler
  libmbedtls-dev libcmocka-dev clang libclang-rt-14-dev)
# Node.js may come from elsewhere (NodeSource's nodejs bundles npm and
# conflicts with Debian's npm): only ask apt when the commands are missing.
command -v node >/dev/null || host_pkgs+=(nodejs)
command -v npm >/dev/null || host_pkgs+=(npm)
cross_pkgs=(qemu-user g++-aarch64-linux-gnu)
arm64_pkgs=(libcmocka-dev:arm64 libflatbuffers-dev:arm64 libmbedtls-dev:arm64)

wanted=("${host_pkgs[@]}")
[ $cross -eq 1 ] && wanted+=("${cross_pkgs[@]}" "${arm64_pkgs[@]}")

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#wanted[@]} packages already installed"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  echo "setup-deps: error: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

if [ $cross -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
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
    printf 'deb [arch=arm64] http://ports.ubuntu.com/ubuntu-ports %s main universe\ndeb [arch=arm64] http://ports.ubuntu.com/ubuntu-ports %s-updates main universe\n' \
      "$codename" "$codename" | "${SUDO[@]}" tee /etc/apt/sources.list.d/epctx-arm64-ports.list >/dev/null
  fi
  "${SUDO[@]}" dpkg --add-architecture arm64
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
