import ControlState
import Hummingbird
import TelemetryModel

/// `GET /v1/status-codes`: every enrollment status code the SDK documents, with its name,
/// whether it is a success, what it means and what support does next, plus the SDK's
/// rhythm (retry and check-in periods). The console, the CLI and bundles explain codes from
/// the same table (`EnrollmentStatus.all`); this route lets a client do so without a copy.
struct StatusCodeRoutes: Sendable {
    struct Answer: Encodable {
        var statusCodes: [EnrollmentStatusExplanation]
        /// Hours after a failed enrollment before the SDK tries again.
        var retryAfterFailureHours = 24
        /// Hours between an enrolled app's policy check-ins.
        var policyCheckInHours = 8
    }

    /// `read`, like the other reads: it holds no data, but the callers are read tools.
    func register(on api: APIRoutes) {
        api.requiring(.read, apps: .none).get("/v1/status-codes") { _, _ in
            try Response.json(Answer(statusCodes: EnrollmentStatus.all))
        }
    }
}
