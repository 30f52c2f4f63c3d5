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
if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
  echo "skipped: no apt package lists here (apt-get update first)"; exit 77
fi

status=0
check_image() { # name binary extra-packages...
  local name=$1 bin=$2 packages candidate from_release p
  shift 2
  if [[ ! -x $bin ]]; then echo "skipped: $bin is not built"; exit 77; fi
  packages=$(sh "$SOURCE/docker/runtime-packages.sh" "$bin") || {
    echo "FAIL: $name: docker/runtime-packages.sh $bin failed"; status=1; return; }
  packages=$(printf '%s\n' $packages "$@" | sort -u)
  # One apt-cache call for all (per-package calls take minutes on a busy machine). Per package:
  # its candidate, and whether an origin line under the candidate's version names the release.
  local seen=" "
  while read -r p candidate from_release; do
    seen+="$p "
    if [[ $candidate == "(none)" ]]; then
      echo "FAIL: $name: $p has no install candidate"; status=1
    elif [[ $from_release != yes ]]; then
      echo "FAIL: $name: $p $candidate does not come from Debian $codename"; status=1
    fi
  done < <(apt-cache policy $packages | awk -v rel="$codename" '
      function flush() { if (pkg != "") print pkg, cand, (ok ? "yes" : "no") }
      /^[^ ].*:$/ { flush(); pkg = substr($0, 1, length($0) - 1); cand = "(none)"; ok = 0; grab = 0; next }
      $1 == "Candidate:" { cand = $2; next }
      $1 == cand || ($1 == "***" && $2 == cand) { grab = 1; next }
      grab && /^ +[0-9]+ / { if ($0 ~ (" " rel "(-updates|-security)?/")) ok = 1; next }
      { grab = 0 }
      END { flush() }')
  for p in $packages; do  # apt-cache policy prints nothing for a name it does not know
    [[ $seen == *" $p "* ]] || { echo "FAIL: $name: $p is unknown to apt"; status=1; }
  done
  echo "$name: $(wc -w <<<"$packages") runtime packages resolve in $codename: $(echo $packages)"
}
# Packages a Dockerfile installs besides the linked libraries (ca-certificates).
extra_of() {
  sed -n 's/.*xargs -a \/tmp\/runtime-packages.txt apt-get install -y --no-install-recommends//p' \
    "$SOURCE/docker/$1.Dockerfile" | tr -d '\\'
}
check_image scaler "$BINARY/scaler/warmpool-scaler" $(extra_of scaler)
check_image worker "$BINARY/worker/warmpool-worker" $(extra_of worker)
exit $status
