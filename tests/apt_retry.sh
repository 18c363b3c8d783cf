# SPDX-License-Identifier: Apache-2.0
# Sourced by the setup scripts (they set SUDO and APT_TAG first). A Debian
# mirror in the middle of a sync serves index files of the wrong size for
# minutes ("File has unexpected size ... Mirror sync in progress?"), which
# fails apt-get update and downloads: both are tried again before giving up.

# apt-get update, three tries 10-20 s apart; then goes on with the lists
# fetched (what is really missing fails the install that follows).
apt_update() {
  local try
  for try in 1 2 3; do
    "${SUDO[@]}" apt-get update -q -o Acquire::Retries=3 && return 0
    echo "$APT_TAG: apt-get update failed (try $try of 3)" >&2
    [ $try -eq 3 ] || sleep $((try * 10))
  done
  echo "$APT_TAG: apt-get update kept failing; going on with the lists fetched" >&2
}

# apt_retry COMMAND...: a downloading apt-get command, three tries with an
# update between; false when all three fail.
apt_retry() {
  local try
  for try in 1 2 3; do
    "$@" && return 0
    echo "$APT_TAG: $* failed (try $try of 3)" >&2
    [ $try -eq 3 ] || { sleep 20; apt_update; }
  done
  return 1
}
