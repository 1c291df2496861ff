import TelemetryModel

/// The attribute names the OTLP mapping reads: OpenTelemetry semantic conventions for the
/// identity of a record, plus the `mam.*` names that carry the SDK's privacy flags. Each is
/// looked up on the log record first, then on its resource.
enum SemanticKey {
    /// The app id (bundle id): `OTEL_SERVICE_NAME`.
    static let serviceName = "service.name"
    static let serviceVersion = "service.version"
    static let deviceID = "device.id"
    static let sessionID = "session.id"
    static let endUserID = "enduser.id"
    /// The name of an event record (older SDKs put it in an attribute, newer in `EventName`).
    static let eventName = "event.name"
    /// A unique id of the record: the dedup key, like `eventId` in native records.
    static let recordUID = "log.record.uid"
    static let telemetryDisabled = "mam.telemetry_disabled"
    static let usePPE = "mam.use_ppe"

    /// Read into the record's envelope rather than kept as free fields.
    static let consumed: Set<String> = [
        serviceName, serviceVersion, deviceID, sessionID, endUserID, recordUID, telemetryDisabled, usePPE,
    ]

    /// The SDKs' default `service.name` when none was configured: not an app id.
    static let unknownServicePrefix = "unknown_service"
}

/// The event names that make an OTLP record a telemetry event rather than a log record.
enum MAMEvent {
    static let names: Set<String> = [EventName.appLaunch, EventName.enrollmentCall, EventName.intuneAction]
}
