import TelemetryModel

typealias Resource = Opentelemetry_Proto_Resource_V1_Resource

/// What a resource says for every record under it, read once per `ResourceLogs`: the
/// identity attributes the mapping consumes, and the others as one JSON object that each
/// record keeps under `resource` (so nothing the exporter sent is lost).
struct ResourceContext {
    /// The consumed attributes (`service.name`, `device.id`, `mam.*`, ...), last one wins.
    let identity: [String: AnyValue]
    /// The remaining attributes as a JSON object, `nil` when there are none.
    let rest: [UInt8]?

    init(_ resource: Resource) {
        // `event.name` names records, not resources: on a resource it is just kept.
        let split = RecordAttributes(resource.attributes.filter { $0.key != SemanticKey.eventName })
        identity = split.identity
        let others = split.free + resource.attributes.filter { $0.key == SemanticKey.eventName }
        if others.isEmpty {
            rest = nil
        } else {
            var json: [UInt8] = []
            KeyValue.appendObject(others, to: &json)
            rest = json
        }
    }
}
