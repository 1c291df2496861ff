#!/usr/bin/env bash
# Installs the real OpenTelemetry Python SDK and its OTLP/HTTP exporter into .build-venv-otel/
# (git-ignored) for the OTLP interoperability test (Tests/IntegrationTests/OTLPExporterTests.swift),
# and prints the venv's python. Idempotent: a venv that already has the pinned versions is reused.
# The versions are pinned so a test failure means a change here, not a new upstream release.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$PWD/.build-venv-otel
version=${OTEL_PYTHON_VERSION:-1.45.2}
packages=("opentelemetry-sdk==$version" "opentelemetry-exporter-otlp-proto-http==$version")
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('opentelemetry-sdk') != '$version' or m.version('opentelemetry-exporter-otlp-proto-http') != '$version')" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}" >&2
fi
echo "$venv/bin/python"
