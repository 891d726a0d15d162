#!/usr/bin/env bash
# Install Debian's redis-server for the Redis driver's tests (tests/conftest.py starts one
# on a free port in a temporary directory, AOF on, and stops it), once.
# Only the binary is wanted: the package's own service is never started here (no systemd),
# and a redis-server started by the package elsewhere is left alone.
# Idempotent: does nothing when redis-server is already on the PATH.
set -euo pipefail
. "$(dirname "$0")/lib/apt-install.sh"
apt_install_once redis-server redis-server -- redis-server --version
