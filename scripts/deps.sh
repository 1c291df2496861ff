#!/usr/bin/env bash
# Installs the system packages mamtelemetryd builds, runs and tests with (Debian 12).
# Safe to run again: apt-get skips what is installed. Pass "test" for the test-only tools,
# "bench" for the benchmark's peers, "soak" for the soak's tools.
set -euo pipefail
need=(pkg-config zlib1g-dev libdeflate-dev libsystemd-dev libsqlite3-dev libarchive-dev systemd curl)
if [[ "${1:-}" == "test" ]]; then
  # chromium: the browser the console tests drive (Playwright launches it by path).
  # dpkg-dev and groff-base: the package test builds the .deb and renders its man pages.
  # The shell scripts' lint step (scripts/shellcheck.sh) runs shellcheck.
  # valgrind: the hot paths' instruction counts (scripts/callgrind.sh).
  need+=(unzip prometheus python3-venv chromium dpkg-dev groff-base shellcheck valgrind)
fi
if [[ "${1:-}" == "test" || "${1:-}" == "soak" ]]; then
  # jq: the soak (scripts/soak.sh) reads the store's size and record count from
  # `mamtelemetryd --store-layout` with it.
  need+=(jq)
fi
if [[ "${1:-}" == "soak" ]]; then
  # gnuplot-nox: the plot `make soak` puts into BENCHMARKS.md (the test step needs none).
  need+=(gnuplot-nox)
fi
if [[ "${1:-}" == "test" || "${1:-}" == "bench" ]]; then
  # Debian's ClickHouse (18.16): the ClickHouse backend's tests and the benchmark's peer run
  # it privately through scripts/clickhouse/server.sh (never the packaged systemd unit).
  need+=(clickhouse-server clickhouse-client)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The Swift toolchain ships in /opt/swift on the build machines.
if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
  echo "export PATH=/opt/swift/usr/bin:\$PATH" > /tmp/mamtelemetry-swift-path
fi
