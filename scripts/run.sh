#!/usr/bin/env bash
# One command to run the daemon on a fresh Debian machine, on its embedded default store:
#   ./scripts/run.sh [--data-dir DIR] [--listen HOST:PORT] [--config FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# shellcheck source=/dev/null # written by deps.sh when it installed a toolchain
[[ -f /tmp/mamtelemetry-swift-path ]] && source /tmp/mamtelemetry-swift-path
swift build -c release --product mamtelemetryd
swift build -c release --product mamtelemetryctl
exec .build/release/mamtelemetryd "$@"
