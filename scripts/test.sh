#!/usr/bin/env bash
# One command to run every test on a fresh Debian machine: installs the system packages
# (journald, systemd-analyze, promtool/prometheus, unzip ...), builds, and runs the whole
# suite (unit tests and integration tests that drive the built binaries over loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh test
[[ -f /tmp/mamtelemetry-swift-path ]] && source /tmp/mamtelemetry-swift-path
swift build --build-tests
swift test --skip-build 2>&1 | tee /tmp/mamtelemetry-test.log
status=${PIPESTATUS[0]}
exit "$status"
