#!/usr/bin/env bash
# Install Debian's redis-server for the Redis driver's tests (tests/conftest.py starts one
# on a free port in a temporary directory, AOF on, and stops it), once.
# Only the binary is wanted: the package's own service is never started here (no systemd),
# and a redis-server started by the package elsewhere is left alone.
# Idempotent: does nothing when redis-server is already on the PATH.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
    echo "redis-server present: $(redis-server --version)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends redis-server
echo "redis-server installed: $(redis-server --version)"
