#!/usr/bin/env bash
# Provision a real Kubernetes node for the tests in tests/node (scripts/prometheus.sh
# provisions the Prometheus they also use).
#
# Prints the cache directory (~/.cache/ferry-node) holding:
#   k8s-<version>/      kubelet, kube-scheduler, kube-proxy (built like scripts/envtest.sh
#                       builds the control plane, same version, same Go build cache)
#   images/             docker-save tarballs for containerd: the pause image, the runtime
#                       image built from ./Dockerfile, `runtime.ref` naming the latter and
#                       `runtime.size` its size (bytes; printed when it is built)
# With --no-build it only looks (exit 3 when anything is missing or the runtime image is
# older than the code). Idempotent: a warm run checks a few files and a content hash.
#
# Needs root and Debian's docker.io, containerd, runc, mmdebstrap, containernetworking-plugins
# and iptables (installed here with apt-get when missing). No registry is reachable, so the
# images' base is made here, standing in for python:3.11-slim: a Debian bookworm minbase with
# python3 and its venv module, merged /usr without the usrmerge package (and so without perl),
# no manuals, documentation or translations, the machine's CA certificates copied in (HTTPS
# may go through an intercepting proxy).
# dockerd is started by hand only while an image is built, and stopped by its PID.
set -euo pipefail

# shellcheck source=scripts/lib/versions.sh
source "$(dirname "$0")/lib/versions.sh"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/ferry-node"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
KUBE_BIN="$CACHE/k8s-$K8S_VERSION"
IMAGES="$CACHE/images"
PACKAGES=(docker.io containerd runc mmdebstrap containernetworking-plugins iptables)
BASE_REF="ferry.local/python-base:bookworm-slim"
PAUSE_REF="ferry.local/pause:1"
RUNTIME_REPOSITORY="ferry.local/ferry"
DOCKER_RUN=/run/ferry-node-docker

log() { echo "node: $*" >&2; }
# The runtime image's size as docker counts it (every layer, uncompressed).
log_size() {
    local size
    size="$(cat "$IMAGES/runtime.size" 2>/dev/null)" || return 0
    log "runtime image $(cat "$IMAGES/runtime.ref"): $((size / 1000000)) MB ($((size / 1048576)) MiB)"
}
missing() {
    log "$*; run \`make test-assets\` (it provisions the node)"
    exit 3
}

packages_missing() {
    local package
    for package in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || return 0
    done
    return 1
}

have_binaries() {
    local bin
    for bin in "$KUBE_BIN"/{kubelet,kube-scheduler,kube-proxy}; do
        [[ -x "$bin" ]] || return 1
    done
}

# The runtime image's key: a hash of the base it builds on, the Dockerfile and every file its
# COPY lines name from the context (tracked or untracked, minus what git ignores), so editing
# the code asks for a rebuild.
runtime_key() {
    local paths
    paths="$(sed -n '/^COPY --from/d; s/^COPY \(.*\) [^ ]*$/\1/p' "$REPO/Dockerfile" | tr '\n' ' ')"
    # shellcheck disable=SC2086
    {
        echo "$BASE_REF"
        sha256sum "$REPO/Dockerfile" "$REPO/.dockerignore" | cut -d' ' -f1
        (cd "$REPO" && git ls-files -co --exclude-standard -z -- $paths | sort -z \
            | xargs -0 sha256sum)
    } | sha256sum | cut -c1-16
}

if [[ "${1:-}" == "--no-build" ]]; then
    ! packages_missing || missing "Debian packages missing (one of: ${PACKAGES[*]})"
    have_binaries || missing "no kubelet/kube-scheduler/kube-proxy in $KUBE_BIN"
    [[ -f "$IMAGES/pause.tar" && -d "$CACHE/bin" ]] || missing "no pause image in $IMAGES"
    [[ -f "$IMAGES/runtime-$(runtime_key).tar" ]] || missing "the runtime image is older than the code"
    log_size
    echo "$CACHE"
    exit 0
fi

[[ "$(id -u)" -eq 0 ]] || { log "must run as root (containerd, kubelet and dockerd need it)"; exit 1; }
mkdir -p "$CACHE" "$IMAGES"
work="$(mktemp -d)"
dockerd_pid=""
stop_dockerd() {
    [[ -n "$dockerd_pid" ]] || return 0
    kill "$dockerd_pid" 2>/dev/null || true
    wait "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
    # dockerd leaves its default network namespace mounted below its exec root.
    umount "$DOCKER_RUN/exec/netns/default" 2>/dev/null || true
    rm -rf "$DOCKER_RUN"
    # Its containerd makes /opt/containerd (empty) on every start.
    rmdir /opt/containerd/bin /opt/containerd/lib /opt/containerd 2>/dev/null || true
}
cleanup() {
    stop_dockerd
    rm -rf "$work"
}
trap cleanup EXIT
trap 'log "failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
# shellcheck source=scripts/lib/go-build.sh
source "$REPO/scripts/lib/go-build.sh"

install_packages() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # The packages' maintainer scripts ask systemd to start the daemons; there is none here.
    apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
}

# A private dockerd (own socket, data under the cache so its build cache survives, no
# bridge and no iptables rules: builds use the host network), up until this script exits.
start_dockerd() {
    [[ -z "$dockerd_pid" ]] || return 0
    mkdir -p "$DOCKER_RUN"
    export DOCKER_HOST="unix://$DOCKER_RUN/docker.sock"
    dockerd --host="$DOCKER_HOST" --data-root="$CACHE/docker" --exec-root="$DOCKER_RUN/exec" \
        --pidfile="$DOCKER_RUN/docker.pid" --storage-driver=overlay2 --bridge=none --iptables=false \
        --ip-forward=false --ip-masq=false >"$CACHE/dockerd.log" 2>&1 &
    dockerd_pid=$!
    local tries=0
    until docker version >/dev/null 2>&1; do
        kill -0 "$dockerd_pid" 2>/dev/null || { log "dockerd exited; see $CACHE/dockerd.log"; exit 1; }
        ((++tries < 120)) || { log "dockerd not answering after 60 s; see $CACHE/dockerd.log"; exit 1; }
        sleep 0.5
    done
}

build_base_image() {
    start_dockerd
    docker image inspect "$BASE_REF" >/dev/null 2>&1 && return 0
    mmdebstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook='copy-in /usr/local/share/ca-certificates /usr/local/share' \
        --customize-hook='chroot "$1" update-ca-certificates' \
        --customize-hook='printf "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n" >"$1/etc/pip.conf"' \
        bookworm "$work/base.tar"
    docker import "$work/base.tar" "$BASE_REF" >/dev/null
}

build_pause_image() {
    start_dockerd
    mkdir -p "$work/pause"
    (cd "$work/pause" && "$GO" build -trimpath -ldflags='-s -w' -o pause "$REPO/scripts/node/pause.go")
    printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >"$work/pause/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$PAUSE_REF" "$work/pause" >/dev/null
    docker save "$PAUSE_REF" -o "$IMAGES/pause.tar.part"
    mv "$IMAGES/pause.tar.part" "$IMAGES/pause.tar"
    echo "$PAUSE_REF" >"$IMAGES/pause.ref"
}

build_runtime_image() {
    local key="$1" ref="$RUNTIME_REPOSITORY:$1"
    build_base_image
    DOCKER_BUILDKIT=0 docker build -q --network host --build-arg "BASE=$BASE_REF" -t "$ref" "$REPO" >/dev/null
    docker image inspect -f '{{.Size}}' "$ref" >"$IMAGES/runtime.size"
    docker save "$ref" -o "$IMAGES/runtime-$key.tar.part"
    # One runtime image is kept: the cache does not grow with every code change.
    rm -f "$IMAGES"/runtime-*.tar
    mv "$IMAGES/runtime-$key.tar.part" "$IMAGES/runtime-$key.tar"
    echo "$ref" >"$IMAGES/runtime.ref"
    # Keep the base and the dependency layers (the build cache); drop older runtime images.
    docker images --format '{{.Repository}}:{{.Tag}}' "$RUNTIME_REPOSITORY" \
        | { grep -vx "$ref" || true; } | xargs -r docker rmi >/dev/null
    docker image prune -f >/dev/null
}

if packages_missing; then timed install_packages; fi
key="$(runtime_key)"
[[ -f "$IMAGES/runtime-$key.tar" ]] || timed build_runtime_image "$key"
[[ -f "$IMAGES/pause.ref" ]] || timed build_pause_image
stop_dockerd
have_binaries || timed kubernetes_build "$K8S_VERSION" "$KUBE_BIN" kubelet kube-scheduler kube-proxy
# bin/ names this run's versions, so the tests need not know them.
mkdir -p "$CACHE/bin"
for bin in "$KUBE_BIN"/{kubelet,kube-scheduler,kube-proxy}; do
    ln -sfn "$bin" "$CACHE/bin/${bin##*/}"
done
log_size
echo "$CACHE"
