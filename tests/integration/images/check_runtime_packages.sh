#!/usr/bin/env bash
# Cheap CI check of the images' runtime package lists (the full build is scripts/image-check.sh).
# The Dockerfiles derive each list at build time with docker/runtime-packages.sh (ldd + dpkg -S on
# the built binary). This runs the same script on the binaries built here and checks that every
# package it names, plus the ones the Dockerfile adds by name, has an install candidate from the
# Debian release the Dockerfiles build on - the runtime stage's `apt-get install` would fail
# otherwise. Exit 77 (skipped): not Debian of that release, no apt lists, or binaries not built.
# Usage: check_runtime_packages.sh SOURCE_DIR BINARY_DIR
set -euo pipefail
SOURCE=$1 BINARY=$2

release=$(sed -n 's/^ARG DEBIAN_RELEASE=//p' "$SOURCE/docker/scaler.Dockerfile")
[[ -n $release ]] || { echo "FAIL: no ARG DEBIAN_RELEASE in docker/scaler.Dockerfile"; exit 1; }
. /etc/os-release
if [[ ${ID:-} != debian || ${VERSION_ID:-} != "$release" ]]; then
  echo "skipped: this is ${PRETTY_NAME:-unknown}, the images build on Debian $release"; exit 77
fi
codename=$VERSION_CODENAME
if ! compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
  echo "skipped: no apt package lists here (apt-get update first)"; exit 77
fi

status=0
check_image() { # name binary extra-packages...
  local name=$1 bin=$2 packages policy candidate origin p
  shift 2
  if [[ ! -x $bin ]]; then echo "skipped: $bin is not built"; exit 77; fi
  packages=$(sh "$SOURCE/docker/runtime-packages.sh" "$bin") || {
    echo "FAIL: $name: docker/runtime-packages.sh $bin failed"; status=1; return; }
  packages=$(printf '%s\n' $packages "$@" | sort -u)
  for p in $packages; do
    policy=$(apt-cache policy "$p")
    candidate=$(awk '/Candidate:/ { print $2 }' <<<"$policy")
    if [[ -z $candidate || $candidate == "(none)" ]]; then
      echo "FAIL: $name: $p has no install candidate"; status=1; continue
    fi
    # The candidate's origin lines (under " *** version" or "     version") must name the release.
    origin=$(awk -v v="$candidate" '$1 == v || ($1 == "***" && $2 == v) { grab = 1; next }
                                    grab && /^ +[0-9]+ / { print; next } { grab = 0 }' <<<"$policy")
    if ! grep -Eq " $codename(-updates|-security)?/" <<<"$origin"; then
      echo "FAIL: $name: $p $candidate does not come from Debian $codename: $origin"; status=1
    fi
  done
  echo "$name: $(wc -w <<<"$packages") runtime packages resolve in $codename: $(echo $packages)"
}
check_image scaler "$BINARY/scaler/warmpool-scaler"
extra=$(sed -n 's/.*xargs -a \/tmp\/runtime-packages.txt apt-get install -y --no-install-recommends//p' \
  "$SOURCE/docker/worker.Dockerfile")
check_image worker "$BINARY/worker/warmpool-worker" $extra
exit $status
