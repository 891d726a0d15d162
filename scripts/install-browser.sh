#!/usr/bin/env bash
# Install Debian's Chromium for the dashboard's browser tests (tests/browser), once.
# Playwright (a dev dependency) drives this browser; `playwright install` is never run.
# Idempotent: does nothing when chromium is already on the PATH.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    echo "chromium present: $(chromium --version 2>/dev/null | tail -n 1)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium
echo "chromium installed: $(chromium --version 2>/dev/null | tail -n 1)"
