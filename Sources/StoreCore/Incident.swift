public import TelemetryModel

/// A user-initiated diagnostic upload: what the user shared and when, under the
/// short id they quote to support.
public struct Incident: Sendable, Hashable, Codable {
    public var id: String
    public var guid: String
    public var env: TelemetryEnvironment
    public var appId: String
    public var deviceId: String?
    public var sessionId: String?
    public var identity: String?
    public var description: String?
    public var createdAt: Int64
    public var recordCount: Int
    /// Device-time window covered by the uploaded records.
    public var firstTime: Int64?
    public var lastTime: Int64?

    public init(
        id: String, guid: String, env: TelemetryEnvironment, appId: String, deviceId: String?,
        sessionId: String?, identity: String?, description: String?, createdAt: Int64,
        recordCount: Int, firstTime: Int64?, lastTime: Int64?
    ) {
        self.id = id
        self.guid = guid
        self.env = env
        self.appId = appId
        self.deviceId = deviceId
        self.sessionId = sessionId
        self.identity = identity
        self.description = description
        self.createdAt = createdAt
        self.recordCount = recordCount
        self.firstTime = firstTime
        self.lastTime = lastTime
    }
}
