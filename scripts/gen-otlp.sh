#!/usr/bin/env bash
# Regenerates Sources/OTLP/Generated/*.pb.swift from Protos/ (run only when a .proto changes;
# the generated files are committed because building the plugin takes ~10 minutes here).
#
#   PROTOC_GEN_SWIFT=/path/to/protoc-gen-swift scripts/gen-otlp.sh
#
# Protos/opentelemetry/ is opentelemetry-proto v1.11.0 (commit 790608c4d51e), the logs, common,
# resource and logs-collector files only; Protos/google/rpc/status.proto is the Status subset
# OTLP/HTTP error answers use. Generated with protoc 3.21.12 (Debian's protobuf-compiler) and
# protoc-gen-swift 1.39.0, built from apple/swift-protobuf 1.39.0 outside this repository:
#   git clone https://github.com/apple/swift-protobuf -b 1.39.0 && cd swift-protobuf &&
#   swift build -c release --product protoc-gen-swift
set -euo pipefail
cd "$(dirname "$0")/.."
plugin=${PROTOC_GEN_SWIFT:?set PROTOC_GEN_SWIFT to a protoc-gen-swift 1.39.0 binary}
out=Sources/OTLP/Generated
rm -f "$out"/*.pb.swift
mkdir -p "$out"
protoc --plugin=protoc-gen-swift="$plugin" -I Protos \
    --swift_opt=Visibility=Public --swift_opt=FileNaming=DropPath --swift_out="$out" \
    opentelemetry/proto/common/v1/common.proto \
    opentelemetry/proto/resource/v1/resource.proto \
    opentelemetry/proto/logs/v1/logs.proto \
    opentelemetry/proto/collector/logs/v1/logs_service.proto \
    google/rpc/status.proto
generated=("$out"/*.pb.swift)
echo "generated: ${generated[*]##*/} "
