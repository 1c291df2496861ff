import Foundation
import TelemetryModel
import TestSupport

/// A generated fleet for users' stories: users on devices of their own and on shared ones,
/// a kiosk no one signs in to, events and logs with and without an identity (identities in
/// random case), text that names other users, credentials, and verbose-only markers. It knows
/// which records a user's story holds, so a query can be checked against it record by record.
struct StoryFleet {
    struct Record {
        var kind: RecordKind
        var eventId: String
        var device: String
        /// As sent (random case); nil: the record names no one.
        var identity: String?
        var time: Int64
        var json: String
    }

    var users: [String] = []
    var records: [Record] = []
    var secrets = SecretGenerator(seed: 0)
    /// Device time of the first and last record.
    let start: Int64
    let end: Int64

    init(seed: UInt64, start: Int64, records count: Int) {
        secrets = SecretGenerator(seed: seed)
        self.start = start
        end = start + 6 * 3_600_000
        let userCount = 4 + secrets.rng.below(4)
        users = (0..<userCount).map { _ in
            let core = "pu" + secrets.hex(10)
            secrets.planted.personal.insert(core)
            return "\(core).\(secrets.rng.pick(["jane", "bob", "ana"]))@contoso-\(secrets.hex(3)).com"
        }
        // Each user has one or two devices; two shared devices have two or three users each.
        var usersOf: [String: [String]] = [:]
        for (i, user) in users.enumerated() {
            for d in 0...secrets.rng.below(2) { usersOf["dev-\(i)-\(d)"] = [user] }
        }
        for s in 0..<2 {
            usersOf["shared-\(s)"] = Array(users.shuffled(using: &secrets.rng).prefix(2 + secrets.rng.below(2)))
        }
        usersOf["kiosk"] = []
        let devices = usersOf.keys.sorted()
        for n in 0..<count {
            let device = secrets.rng.pick(devices)
            let candidates = usersOf[device]!
            let identity = candidates.isEmpty || secrets.chance(0.55) ? nil : Self.randomCase(secrets.rng.pick(candidates), &secrets.rng)
            let time = start + Int64(secrets.rng.below(Int(end - start)))
            let kind: RecordKind = secrets.chance(0.4) ? .event : .log
            records.append(record(n, kind: kind, device: device, identity: identity, time: time))
        }
    }

    private mutating func record(_ n: Int, kind: RecordKind, device: String, identity: String?, time: Int64) -> Record {
        let eventId = "\(kind == .event ? "e" : "l")-\(n)"
        var members = [
            #""appId":"com.contoso.\#(secrets.rng.pick(["mail", "docs"]))""#, #""deviceId":"\#(device)""#,
            #""eventId":"\#(eventId)""#, #""time":"\#(Timestamp.format(milliseconds: time))""#,
        ]
        if let identity { members.append(#""identity":"\#(identity)""#) }
        if kind == .event {
            members.append(#""name":"\#(secrets.rng.pick(["AppLaunch", "EnrollmentCall"]))""#)
        } else {
            let level = secrets.rng.pick(["verbose", "info", "warning", "error"])
            var text = Piece(secrets.word() + " " + secrets.word())
            if secrets.chance(0.3) { text = text + Piece(" signed in as \(secrets.rng.pick(users))") }
            if secrets.chance(0.3) { text = text + Piece(" ") + secrets.credential() }
            if level == "verbose" { text = text + Piece(" ") + secrets.marker() }
            members.append(#""level":"\#(level)""#)
            members.append(#""message":\#(text.json)"#)
        }
        return Record(
            kind: kind, eventId: eventId, device: device, identity: identity, time: time, json: "{\(members.joined(separator: ","))}")
    }

    static func randomCase(_ s: String, _ rng: inout SeededRandom) -> String {
        String(s.map { rng.below(2) == 0 ? Character($0.uppercased()) : $0 })
    }

    /// The NDJSON body of one kind's records.
    func body(_ kind: RecordKind) -> String {
        records.filter { $0.kind == kind }.map(\.json).joined(separator: "\n")
    }

    /// The devices `user` used in the window: those of the records naming them, both kinds.
    func devices(of user: String, since: Int64, until: Int64) -> Set<String> {
        Set(records.filter { $0.identity?.lowercased() == user && (since...until).contains($0.time) }.map(\.device))
    }

    /// The eventIds of `user`'s story: their own records in the window and, when `expand`,
    /// the records naming no one from the devices they used in it.
    func story(of user: String, kind: RecordKind, since: Int64, until: Int64, expand: Bool) -> Set<String> {
        let devices = expand ? self.devices(of: user, since: since, until: until) : []
        return Set(
            records.filter { r in
                guard r.kind == kind, (since...until).contains(r.time) else { return false }
                if let identity = r.identity { return identity.lowercased() == user }
                return devices.contains(r.device)
            }.map(\.eventId))
    }

    /// Every planted core a caller without `pii` must not be shown.
    var hidden: Set<String> { secrets.planted.personal.union(secrets.planted.credentials).union(secrets.planted.markers) }
}
