#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# riscv64 libraries for the riscv64-linux preset. Debian 12 has no riscv64
# architecture to install them from, so this builds cmocka and mbedtls's
# libmbedcrypto from Debian's own source packages (apt-get source, the same
# versions as the host's) with g++-riscv64-linux-gnu and installs them, with a
# copy of flatbuffers' headers (used header-only), into PREFIX. Does nothing
# when they are there already.
# usage: bash tests/setup-riscv64.sh [PREFIX]   (default /usr/local/epctx-riscv64,
#        the default of toolchains/riscv64-linux-gnu.cmake)
set -euo pipefail

prefix=${1:-/usr/local/epctx-riscv64}
if [ -f "$prefix/include/cmocka.h" ] && [ -f "$prefix/lib/libmbedcrypto.a" ] &&
  [ -f "$prefix/include/flatbuffers/flatbuffers.h" ]; then
  echo "setup-riscv64: libraries already in $prefix"
  exit 0
fi
SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo)
APT_TAG=setup-riscv64
. "$(dirname "${BASH_SOURCE[0]}")/apt_retry.sh"

# Source packages need a deb-src entry for the release's main archive.
if ! apt-get source --print-uris cmocka >/dev/null 2>&1; then
  . /etc/os-release
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "${VERSION_CODENAME}" | "${SUDO[@]}" tee /etc/apt/sources.list.d/epctx-src.sources >/dev/null
  apt_update
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt_retry apt-get source -q -o Acquire::Retries=3 cmocka mbedtls >/dev/null 2>&1 ||
  { echo "setup-riscv64: error: apt-get source cmocka mbedtls failed" >&2; exit 1; }

cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=riscv64
  -DCMAKE_C_COMPILER=riscv64-linux-gnu-gcc -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib)
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S cmocka-*/ -B cmocka-build "${cross[@]}" -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF >/dev/null
cmake --build cmocka-build -j"$jobs" >/dev/null
"${SUDO[@]}" cmake --install cmocka-build >/dev/null

cmake -S mbedtls-*/ -B mbedtls-build "${cross[@]}" -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
  -DUSE_SHARED_MBEDTLS_LIBRARY=OFF -DUSE_STATIC_MBEDTLS_LIBRARY=ON -DMBEDTLS_FATAL_WARNINGS=OFF >/dev/null
cmake --build mbedtls-build -j"$jobs" --target mbedcrypto >/dev/null
"${SUDO[@]}" mkdir -p "$prefix/lib" "$prefix/include"
"${SUDO[@]}" cp -r mbedtls-*/include/mbedtls mbedtls-*/include/psa "$prefix/include/"
"${SUDO[@]}" cp mbedtls-build/library/libmbedcrypto.a "$prefix/lib/"

"${SUDO[@]}" cp -r /usr/include/flatbuffers "$prefix/include/"
echo "setup-riscv64: cmocka, libmbedcrypto and flatbuffers headers installed in $prefix"
