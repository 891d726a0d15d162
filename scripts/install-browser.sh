#!/usr/bin/env bash
# Install Debian's Chromium for the dashboard's browser tests (tests/browser), once.
# Playwright (a dev dependency) drives this browser; `playwright install` is never run.
# Idempotent: does nothing when chromium is already on the PATH.
set -euo pipefail
. "$(dirname "$0")/lib/apt-install.sh"
apt_install_once chromium chromium -- chromium --version
