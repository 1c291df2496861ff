/// The `# HELP` text of the daemon's metric families, wherever they are emitted.
enum MetricHelp {
    static let texts: [String: String] = [
        "mamtelemetry_http_requests_total": "HTTP answers by route template, method and status code.",
        "mamtelemetry_records_accepted_total": "Records stored durably, by kind and environment.",
        "mamtelemetry_records_rejected_total": "Records refused as invalid, by kind and reason.",
        "mamtelemetry_records_dropped_total": "Records dropped by policy (telemetry disabled, duplicate), by kind and reason.",
        "mamtelemetry_request_bytes_total": "Request body bytes as received on the wire, by route.",
        "mamtelemetry_decompressed_bytes_total": "Request body bytes after Content-Encoding was undone, by route.",
        "mamtelemetry_batches_committed_total": "Group-commit batches made durable.",
        "mamtelemetry_store_raw_bytes_total": "Record bytes handed to the store before compression.",
        "mamtelemetry_store_compressed_bytes_total": "Record bytes written to the store after zlib compression.",
        "mamtelemetry_commit_duration_seconds": "Time to make one group-commit batch durable.",
        "mamtelemetry_commit_queue_records": "Records waiting for the next durable commit.",
        "mamtelemetry_compression_ratio": "Raw to compressed size of the last committed batch.",
        "mamtelemetry_journal_mirror_sent_total": "Log records mirrored into the systemd journal.",
        "mamtelemetry_journal_mirror_failed_total": "Log records the journal refused or could not receive.",
        "mamtelemetry_journal_mirror_dropped_total": "Log records dropped because the mirror queue was full.",
        "mamtelemetry_journal_mirror_queue_depth": "Log records waiting to be mirrored into the journal.",
        "mamtelemetry_journal_mirror_send_seconds": "Time to send one record to journald.",
        "mamtelemetry_app_launches_total": "AppLaunch events stored, by management type and environment.",
        "mamtelemetry_enrollment_calls_total": "EnrollmentCall events stored, by operation, status code (and its SDK name) and environment.",
        "mamtelemetry_enrollment_duration_seconds": "Reported duration of enrollment calls, by operation and environment.",
        "mamtelemetry_intune_actions_total": "IntuneAction events stored, by action and environment.",
    ]

    static func text(for name: String) -> String {
        texts[name] ?? "mamtelemetryd metric \(name)."
    }
}
