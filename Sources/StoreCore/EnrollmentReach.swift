public import TelemetryModel

/// How many distinct devices and users the enrollment calls of a window reached, per app and
/// status code, and per app among the failed calls: "200 AccountNotLicensed hit 40 users on 52
/// devices". Counted from records (rollups keep no devices), so only what retention kept.
public struct EnrollmentReach: Sendable, Hashable {
    public struct Key: Hashable, Sendable {
        public var app: String
        public var statusCode: Int?

        public init(app: String, statusCode: Int?) {
            self.app = app
            self.statusCode = statusCode
        }
    }

    public struct Count: Hashable, Sendable {
        public var devices: Int
        public var users: Int

        public init(devices: Int, users: Int) {
            self.devices = devices
            self.users = users
        }
    }

    public var byCode: [Key: Count]
    /// Per app: the devices and users with at least one failed call.
    public var failingByApp: [String: Count]
    /// Distinct values past ``Builder/maxTracked`` were not counted (the counts are lower bounds).
    public var truncated: Bool

    public init(byCode: [Key: Count] = [:], failingByApp: [String: Count] = [:], truncated: Bool = false) {
        self.byCode = byCode
        self.failingByApp = failingByApp
        self.truncated = truncated
    }

    /// Gathers the reach from the keys of enrollment calls.
    public struct Builder: Sendable {
        /// Distinct (group, device or user) pairs tracked at most: memory stays bounded on a fleet.
        public static let maxTracked = 2_000_000
        private var devices: [Key: Set<String>] = [:]
        private var users: [Key: Set<String>] = [:]
        private var failingDevices: [String: Set<String>] = [:]
        private var failingUsers: [String: Set<String>] = [:]
        private var tracked = 0
        private var truncated = false

        public init() {}

        public mutating func add(_ k: RecordKeys) {
            guard k.name == EventName.enrollmentCall else { return }
            let key = Key(app: k.appId, statusCode: k.statusCode)
            let failed = (k.succeeded ?? k.statusCode.map(EnrollmentStatus.isSuccess)) == false
            if !k.deviceId.isEmpty {
                Self.insert(k.deviceId, into: &devices[key, default: []], tracked: &tracked, truncated: &truncated)
                if failed { Self.insert(k.deviceId, into: &failingDevices[k.appId, default: []], tracked: &tracked, truncated: &truncated) }
            }
            if !k.identity.isEmpty {
                Self.insert(k.identity, into: &users[key, default: []], tracked: &tracked, truncated: &truncated)
                if failed { Self.insert(k.identity, into: &failingUsers[k.appId, default: []], tracked: &tracked, truncated: &truncated) }
            }
        }

        private static func insert(_ value: String, into set: inout Set<String>, tracked: inout Int, truncated: inout Bool) {
            guard !set.contains(value) else { return }
            guard tracked < maxTracked else {
                truncated = true
                return
            }
            set.insert(value)
            tracked += 1
        }

        public func result() -> EnrollmentReach {
            var byCode: [Key: Count] = [:]
            for key in Set(devices.keys).union(users.keys) {
                byCode[key] = Count(devices: devices[key]?.count ?? 0, users: users[key]?.count ?? 0)
            }
            var failing: [String: Count] = [:]
            for app in Set(failingDevices.keys).union(failingUsers.keys) {
                failing[app] = Count(devices: failingDevices[app]?.count ?? 0, users: failingUsers[app]?.count ?? 0)
            }
            return EnrollmentReach(byCode: byCode, failingByApp: failing, truncated: truncated)
        }
    }
}
