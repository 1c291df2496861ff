"""Emits MAM diagnostic logs and telemetry events through the real OpenTelemetry Python SDK.

Driven by OTLPExporterTests.swift; configured the way an operator would configure any
OpenTelemetry SDK, by environment alone: OTEL_EXPORTER_OTLP_ENDPOINT (the daemon's base URL),
OTEL_EXPORTER_OTLP_HEADERS (Authorization=Bearer <token>), OTEL_SERVICE_NAME and
OTEL_RESOURCE_ATTRIBUTES (device.id, service.version, enduser.id, ...).

Records go through the SDK's LoggingHandler (Python `logging`) and Logger.emit (events), its
BatchLogRecordProcessor and then an exporter:
  --encoding protobuf   the SDK's own OTLPLogExporter (OTLP/HTTP protobuf)
  --encoding json       the SDK's own request encoder (encode_logs), written as OTLP/HTTP JSON
                        (the Python SDK ships no JSON exporter): ids in hex, enums as integers

Every marker text contains the tag, so the test can find exactly this run's records. Prints one
JSON line: the trace id the error record was logged under and each export's outcome. Exits 1
when any export failed.
"""

import argparse
import base64
import gzip
import json
import logging
import os
import sys

import requests
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.util.re import parse_env_headers


class OTLPJSONLogExporter(LogRecordExporter):
    """OTLP/HTTP JSON from the SDK's own protobuf request: OTLP JSON is the protobuf JSON
    mapping except that trace and span ids are hex, not base64, and enums are integers."""

    def __init__(self):
        base = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/")
        self.url = base + "/v1/logs"
        self.headers = dict(parse_env_headers(os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", ""), liberal=True))
        self.headers.update({"Content-Type": "application/json", "Content-Encoding": "gzip"})
        self.answers = []

    def export(self, batch):
        body = MessageToDict(encode_logs(batch), use_integers_for_enums=True)
        for resource_logs in body.get("resourceLogs", []):
            for scope_logs in resource_logs.get("scopeLogs", []):
                for record in scope_logs.get("logRecords", []):
                    for key in ("traceId", "spanId"):
                        if key in record:
                            record[key] = base64.b64decode(record[key]).hex()
        response = requests.post(self.url, data=gzip.compress(json.dumps(body).encode()), headers=self.headers, timeout=30)
        self.answers.append({"status": response.status_code, "body": response.text})
        return LogRecordExportResult.SUCCESS if response.ok else LogRecordExportResult.FAILURE

    def force_flush(self, timeout_millis=10_000):
        return True

    def shutdown(self):
        pass


class Recording(LogRecordExporter):
    """Remembers the outcome of every export the batch processor makes."""

    def __init__(self, inner):
        self.inner = inner
        self.results = []

    def export(self, batch):
        result = self.inner.export(batch)
        self.results.append({"records": len(batch), "ok": result == LogRecordExportResult.SUCCESS})
        return result

    def force_flush(self, timeout_millis=10_000):
        return self.inner.force_flush(timeout_millis)

    def shutdown(self):
        self.inner.shutdown()


def provider(encoding, resource):
    exporter = Recording(OTLPJSONLogExporter() if encoding == "json" else OTLPLogExporter())
    p = LoggerProvider(resource=resource)
    p.add_log_record_processor(BatchLogRecordProcessor(exporter))
    return p, exporter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--encoding", choices=["protobuf", "json"], required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--opted-out-app", required=True)
    args = parser.parse_args()
    tag, enc = args.tag, args.encoding

    # The app configured by the environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
    app, app_exporter = provider(enc, Resource.create())
    handler = LoggingHandler(level=logging.DEBUG, logger_provider=app)
    enrollment = logging.getLogger("Enrollment")
    enrollment.propagate = False
    enrollment.setLevel(logging.DEBUG)
    enrollment.addHandler(handler)
    session = {"session.id": f"sess-{tag}"}

    enrollment.debug("%s verbose %s", enc, tag, extra=session)
    enrollment.info("%s info %s", enc, tag, extra={**session, "attempt": 2})
    enrollment.warning("%s warning %s", enc, tag, extra=session)
    tracer = TracerProvider().get_tracer("mam")
    with tracer.start_as_current_span("enroll") as span:
        enrollment.error("%s error %s", enc, tag, extra=session)
        trace_id = format(span.get_span_context().trace_id, "032x")
    # Test traffic (MAMTelemetryUsePPE) and an opted-out record (MAMTelemetryDisabled).
    enrollment.info("%s PPE-%s", enc, tag, extra={**session, "mam.use_ppe": True})
    enrollment.info("%s OPTOUT-%s attribute", enc, tag, extra={**session, "mam.telemetry_disabled": True})

    events = app.get_logger("mam.telemetry")
    events.emit(
        event_name="EnrollmentCall",
        attributes={
            "session.id": f"sess-{tag}", "operation": "enroll", "api": "registerAndEnrollAccount",
            "statusCode": 200, "didSucceed": False, "durationMs": 812, "log.record.uid": f"{enc}-enroll-{tag}",
        },
    )
    # The older spelling: the event name as an attribute.
    events.emit(attributes={"event.name": "AppLaunch", "managementType": "MAM-WE", "launch": f"{enc}-{tag}"})

    # An app the daemon's registry marks opted out: nothing of it may be stored.
    opted_out, optout_exporter = provider(
        enc, Resource.create({"service.name": args.opted_out_app, "device.id": f"OPTOUT-{tag}-device"}))
    opted_out.get_logger("mam.telemetry").emit(body=f"{enc} OPTOUT-{tag} registry", severity_text="ERROR")
    opted_out.get_logger("mam.telemetry").emit(event_name="AppLaunch", attributes={"managementType": f"OPTOUT-{tag}"})

    # Shutting down flushes the batch processors: every export has happened after this.
    app.shutdown()
    opted_out.shutdown()
    results = app_exporter.results + optout_exporter.results
    answers = [a for e in (app_exporter, optout_exporter) if isinstance(e.inner, OTLPJSONLogExporter) for a in e.inner.answers]
    print(json.dumps({"traceId": trace_id, "exports": results, "answers": answers}))
    return 0 if results and all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
