#!/usr/bin/env bash
# The support console in a real browser: Debian's Chromium driven by Playwright for Python
# (pip package only: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD, the system browser is launched by
# path), against the built debug daemon with seeded data (Tests/BrowserTests). Screenshots
# and the downloaded bundle land in .build-browser-tests/ (or $CONSOLE_TEST_OUT).
# Build the daemon first (`swift build`); this script does not build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/.build-venv-browser
export MAMTELEMETRYD=${MAMTELEMETRYD:-$root/.build/debug/mamtelemetryd}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

if [[ ! -x $MAMTELEMETRYD ]]; then
    echo "browser-test.sh: $MAMTELEMETRYD is missing; run 'swift build' first" >&2
    exit 2
fi
if [[ ! -x $CHROMIUM ]]; then
    echo "browser-test.sh: $CHROMIUM is missing; scripts/deps.sh test installs Debian's chromium" >&2
    exit 2
fi
if ! "$venv/bin/python" -c 'import playwright, pytest' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet playwright pytest
fi
# Bounded: the whole run takes well under two minutes; a hung browser is stopped.
exec timeout 300 "$venv/bin/python" -m pytest -p no:cacheprovider -q Tests/BrowserTests "$@"
