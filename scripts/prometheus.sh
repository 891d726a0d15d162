#!/usr/bin/env bash
# Provision prometheus and promtool for the alert tests (tests/node/test_alerts.py).
#
# Prints the directory holding both, built from the Go module proxy into a cache outside the
# repo (~/.cache/ferry-node/prometheus-<version>); with --no-build it only looks (exit 3 when
# they are missing). Needs `go`.
set -euo pipefail

# shellcheck source=scripts/lib/versions.sh
source "$(dirname "$0")/lib/versions.sh"
DEST="${XDG_CACHE_HOME:-$HOME/.cache}/ferry-node/prometheus-$PROMETHEUS_VERSION"

log() { echo "prometheus: $*" >&2; }

if [[ -x "$DEST/prometheus" && -x "$DEST/promtool" ]]; then
    echo "$DEST"
    exit 0
fi
if [[ "${1:-}" == "--no-build" ]]; then
    log "no prometheus/promtool in $DEST; run \`make test-assets\` (builds them, ~3 min cold)"
    exit 3
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/lib/go-build.sh
source "$(dirname "$0")/lib/go-build.sh"

build_prometheus() {
    # The tests scrape static targets: leave out every service discovery (and the cloud SDKs
    # they pull in), which keeps the cold build to a fraction.
    GO_TAGS=remove_all_sd go_module_build prometheus "require github.com/prometheus/prometheus v$PROMETHEUS_VERSION" \
        "$DEST" "-s -w" \
        github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
}

timed build_prometheus
echo "$DEST"
