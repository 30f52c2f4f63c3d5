#!/usr/bin/env bash
# Renders every kustomization under manifests/ and checks the result (check_manifests.py).
# Usage: check_manifests.sh <manifests-dir> [<source-root>]
# Exit: 0 ok, 1 a defect, 77 skipped (kubectl or python3-yaml not installed).
set -euo pipefail

manifests=$(cd "${1:?usage: check_manifests.sh <manifests-dir> [source-root]}" && pwd)
source_root=${2:-$(cd "$manifests/.." && pwd)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

KUBECTL=${KUBECTL:-$(command -v kubectl || true)}
if [[ -z "$KUBECTL" || ! -x "$KUBECTL" ]]; then
  echo "SKIP: kubectl not found (need kubectl >= 1.27 with built-in kustomize v5)"
  exit 77
fi
PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x "$PYTHON" ]] || PYTHON=$(command -v python3 || true)
if [[ -z "$PYTHON" ]] || ! "$PYTHON" -c 'import yaml' 2>/dev/null; then
  echo "SKIP: python3 with PyYAML not found (Debian package: python3-yaml)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

render() {  # render NAME DIR
  if ! "$KUBECTL" kustomize "$2" >"$work/$1.yaml" 2>"$work/$1.err"; then
    echo "FAIL: kubectl kustomize $2"
    cat "$work/$1.err"
    exit 1
  fi
  echo "rendered $1 ($(grep -c '^kind:' "$work/$1.yaml") objects)"
}

render base "$manifests/base"
overlays=()
for dir in "$manifests"/overlays/*/; do
  name=$(basename "$dir")
  render "overlay-$name" "$dir"
  overlays+=("$name")
done
((${#overlays[@]} > 0)) || { echo "FAIL: no overlays under $manifests/overlays"; exit 1; }

# Optional components are rendered on top of each overlay, the way a user would enable them
# (kustomize refuses absolute paths, so the wrapper uses relative ones).
for comp in "$manifests"/components/*/; do
  [[ -f "$comp/kustomization.yaml" ]] || continue
  cname=$(basename "$comp")
  for name in "${overlays[@]}"; do
    wrap="$work/wrap-$cname-$name"
    mkdir -p "$wrap"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s\n' \
      "$(realpath --relative-to="$wrap" "$manifests/overlays/$name")" \
      "$(realpath --relative-to="$wrap" "$comp")" >"$wrap/kustomization.yaml"
    render "component-$cname-$name" "$wrap"
  done
done

"$PYTHON" "$here/check_manifests.py" --manifests "$manifests" --source-root "$source_root" \
  --renders "$work" "${overlays[@]}"
