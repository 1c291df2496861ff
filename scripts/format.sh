#!/usr/bin/env bash
# Formats (default) or checks (--lint) every Swift file in the repository with the
# toolchain's swift-format and the checked-in .swift-format. Generated code (the OTLP
# protobuf bindings) is left as the generator wrote it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | grep -v '/Generated/')
if [[ ${1:-} == --lint ]]; then
    exec swift format lint --strict "${files[@]}"
fi
exec swift format format --in-place "${files[@]}"
