#!/usr/bin/env bash
# Provision a real Kubernetes control plane for the e2e tests (envtest convention).
#
# Prints the asset directory holding kube-apiserver, kube-controller-manager and etcd;
# with --no-build it only looks (exit 3 when they are missing).
# KUBEBUILDER_ASSETS wins when set; otherwise the binaries are built from the Go module
# proxy into a cache outside the repo, so a second run is instant and nothing binary is
# ever committed. Needs `go` (PATH or /usr/local/go/bin).
set -euo pipefail

# shellcheck source=scripts/lib/versions.sh
source "$(dirname "$0")/lib/versions.sh"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/ferry-envtest"
ASSETS="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
BINARIES=(kube-apiserver kube-controller-manager etcd)

log() { echo "envtest: $*" >&2; }

have_all() {
    local dir="$1" bin
    for bin in "${BINARIES[@]}"; do [[ -x "$dir/$bin" ]] || return 1; done
}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
    have_all "$KUBEBUILDER_ASSETS" || { log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of: ${BINARIES[*]}"; exit 1; }
    echo "$KUBEBUILDER_ASSETS"
    exit 0
fi
if have_all "$ASSETS"; then
    echo "$ASSETS"
    exit 0
fi
if [[ "${1:-}" == "--no-build" ]]; then
    log "no control-plane binaries in $ASSETS; run \`make envtest\` (builds them, ~7 min cold)"
    exit 3
fi

mkdir -p "$ASSETS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "$0")/lib/go-build.sh"

build_etcd() {
    # The server module's root package is etcd's main; its own go.mod replaces sibling
    # modules by path, so it too is built from a consuming module rather than `go install`.
    go_module_build etcd "require go.etcd.io/etcd/server/v3 v$ETCD_VERSION" "$ASSETS" "-s -w" \
        etcd=go.etcd.io/etcd/server/v3
}

have_all "$ASSETS" || {
    timed build_etcd
    timed kubernetes_build "$K8S_VERSION" "$ASSETS" kube-apiserver kube-controller-manager
}
echo "$ASSETS"
