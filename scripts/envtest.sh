#!/usr/bin/env bash
# Provision a real Kubernetes control plane for the e2e tests (envtest convention).
#
# Prints the asset directory holding kube-apiserver, kube-controller-manager and etcd;
# with --no-build it only looks (exit 3 when they are missing).
# KUBEBUILDER_ASSETS wins when set; otherwise the binaries are built from the Go module
# proxy into a cache outside the repo, so a second run is instant and nothing binary is
# ever committed. Needs `go` (PATH or /usr/local/go/bin).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-3.6.5}"
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

GO="$(command -v go || echo /usr/local/go/bin/go)"
[[ -x "$GO" ]] || { log "go not found; install Go >= 1.25 or set KUBEBUILDER_ASSETS"; exit 1; }
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
BUILD_FLAGS=(-p 2 -trimpath "-ldflags=-s -w")
mkdir -p "$ASSETS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

build_kubernetes() {
    # k8s.io/kubernetes points its staging modules at ./staging with replace lines that a
    # consuming module cannot follow, so map each one to its published v0.Y.Z twin.
    local mod="$work/kubernetes" staging
    mkdir -p "$mod"
    # `go mod download` fetches through whatever module proxy go is configured for.
    local gomod
    gomod="$("$GO" mod download -json "k8s.io/kubernetes@v$K8S_VERSION" \
        | sed -n 's#^[[:space:]]*"GoMod": "\(.*\)",*$#\1#p')"
    staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")"
    [[ -n "$staging" ]] || { log "could not read the staging module list of k8s.io/kubernetes v$K8S_VERSION"; exit 1; }
    {
        echo "module ferry.dev/envtest-kubernetes"
        echo "go 1.25"
        echo "require k8s.io/kubernetes v$K8S_VERSION"
        for m in $staging; do echo "replace $m => $m v0.${K8S_VERSION#1.}"; done
    } >"$mod/go.mod"
    # Without the version stamp the server reports v0.0.0, which fails every kubeVersion
    # constraint (helm's included) and trips client version-skew checks.
    local v="k8s.io/component-base/version" minor="${K8S_VERSION#1.}"
    local stamp="-s -w -X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*}"
    stamp+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
    local cmd
    for cmd in kube-apiserver kube-controller-manager; do
        (cd "$mod" && "$GO" build -p 2 -trimpath "-ldflags=$stamp" -o "$ASSETS/$cmd" "k8s.io/kubernetes/cmd/$cmd")
    done
}

build_etcd() {
    # The server module's root package is etcd's main; its own go.mod replaces sibling
    # modules by path, so it too is built from a consuming module rather than `go install`.
    local mod="$work/etcd"
    mkdir -p "$mod"
    printf 'module ferry.dev/envtest-etcd\ngo 1.25\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" >"$mod/go.mod"
    (cd "$mod" && "$GO" build "${BUILD_FLAGS[@]}" -o "$ASSETS/etcd" go.etcd.io/etcd/server/v3)
}

timed() {
    local start=$SECONDS
    "$@"
    log "$1 took $((SECONDS - start)) s"
}

have_all "$ASSETS" || { timed build_etcd; timed build_kubernetes; }
echo "$ASSETS"
