#!/bin/sh
# runtime-packages.sh BINARY... : prints the Debian packages that own the shared libraries the
# binaries load (via ldd + dpkg -S), one per line. Used by the Dockerfiles' build stage so the
# runtime stage installs exactly the runtime libraries (libgrpc++1.51, libhiredis0.14, ...) that
# match the -dev packages scripts/install-deps.sh installed - no hand-kept list to drift.
# Fails if a library is owned by no package (it would be missing at run time).
set -eu
status=0
for bin in "$@"; do
  if [ ! -x "$bin" ]; then echo "runtime-packages: $bin: not an executable" >&2; exit 1; fi
  if ldd "$bin" | grep -q 'not found'; then
    echo "runtime-packages: $bin has unresolved libraries:" >&2; ldd "$bin" | grep 'not found' >&2
    exit 1
  fi
done
for bin in "$@"; do
  ldd "$bin" | awk '/=> \// { print $3 }' | while read -r lib; do
    # Match on "<multiarch dir>/<soname>" so /lib32 or /usr/lib/i386 copies do not match.
    pattern="*/$(basename "$(dirname "$lib")")/$(basename "$lib")"
    owners=$(dpkg -S "$pattern" 2>/dev/null | grep -v '^diversion' | sed 's/: \/.*//') || true
    if [ -z "$owners" ]; then
      # An update-alternatives link (libblas.so.3 -> /etc/alternatives/...): ask for the real file,
      # under /usr and without it (merged /usr: dpkg may have registered either spelling).
      real=$(readlink -f "$lib")
      for cand in "$real" "${real#/usr}" "/usr$real"; do
        owners=$(dpkg -S "$cand" 2>/dev/null | grep -v '^diversion' | sed 's/: \/.*//') || true
        [ -n "$owners" ] && break
      done
    fi
    if [ -z "$owners" ]; then
      echo "runtime-packages: $lib (needed by $bin) belongs to no Debian package" >&2
      echo "__missing__"
      continue
    fi
    echo "$owners" | tr ',' '\n' | sed 's/^ *//; s/:.*//'
  done
done | sort -u > /tmp/runtime-packages.$$
if grep -q '^__missing__$' /tmp/runtime-packages.$$; then status=1; fi
grep -v '^__missing__$' /tmp/runtime-packages.$$ | grep -v -- '-dev$' || true
rm -f /tmp/runtime-packages.$$
exit $status
