import ArgumentParser

/// Which generator writes the load: `guid` (the default, every field of every record drawn on
/// its own) or `fleet` (requests as a real fleet's SDKs send them, `BenchData.fleetRequests`).
enum BenchDataSet: String, ExpressibleByArgument, CaseIterable, Sendable {
    case guid, fleet, small, verbose
}

/// The realistic-fleet data set. A request is what one device's MAM SDK sends when it flushes
/// its queue (`deviceBatch` events: one app, one user, the device's current session, events in
/// time order), or, for a share of the records (`relayedShare`), a relay forwarding the
/// batches of many devices in one request of `--batch-size` records. Devices keep their ids,
/// user, platform and management type from request to request and report the same way each
/// time: most enroll and check in without trouble, one in 25 fails again and again with its
/// own status code (the retries a support engineer looks for). The GUID-heavy set, by
/// contrast, puts ~500 unrelated devices, users and sessions in every request, which is the
/// worst case for compression and indexes, and sends no small requests.
extension BenchData {
    static let fleetDevices = 20_000
    /// Events in one device's batch, as its SDK sends them.
    static let deviceBatch = 20..<101
    /// Of the records, the share that arrives relayed (several devices per request).
    static let relayedShare = 0.25
    /// A session lasts half an hour of the device's time; the next event after it opens a new one.
    static let sessionMs: Int64 = 1_800_000
    /// The status codes of the devices that keep failing, one per failing device.
    static let failingCodes = [212, 216, 203, 205, 200]

    /// Requests holding `count` records in all: one relayed request of `count` records, or
    /// direct requests of one device batch each. `idBase` makes the events' `eventId`s unique.
    mutating func fleetRequests(count: Int, logs: Bool, idBase: UInt64) -> [(body: [UInt8], records: Int)] {
        let relayed = chance(Self.relayedShare)
        var requests: [(body: [UInt8], records: Int)] = []
        var body: [UInt8] = []
        var written = 0
        while written < count {
            let n = min(Self.deviceBatch.lowerBound + below(Self.deviceBatch.count), count - written)
            let device = below(Self.fleetDevices)
            if logs {
                deviceLogs(into: &body, device: device, count: n)
            } else {
                deviceEvents(into: &body, device: device, count: n, idBase: idBase + UInt64(written))
            }
            written += n
            if !relayed {
                requests.append((body, n))
                body = []
            }
        }
        if relayed { requests.append((body, count)) }
        return requests
    }

    /// One device's batch of `count` events, in time order over the window.
    mutating func deviceEvents(into out: inout [UInt8], device: Int, count: Int, idBase: UInt64) {
        let app = Self.apps[(device + below(2)) % Self.apps.count]
        let settings = settings()
        let step = max(times.spanMs / Int64(max(count, 1)), 1)
        var lastSession = -1
        for k in 0..<count {
            let ms = times.startMs + step * Int64(k) + Int64(below(Int(step)))
            let session = device * 100_000 + Int(ms / Self.sessionMs % 100_000)
            let opensSession = session != lastSession
            lastSession = session
            let (name, data) = fleetEvent(device: device, opensSession: opensSession)
            let event = BenchEvent(
                name: name, time: Self.timestamp(ms), app: app.0, version: app.1, sdkPatch: device % 3, device: device,
                session: session, user: device % 15_000, settings: settings, data: data)
            event.write(into: &out, nonce: nonce, id: idBase + UInt64(k))
        }
    }

    /// One device's batch of `count` diagnostic log records, from one app.
    mutating func deviceLogs(into out: inout [UInt8], device: Int, count: Int) {
        let (app, _) = Self.apps[(device + below(2)) % Self.apps.count]
        for _ in 0..<count { log(into: &out, app: app, device: device) }
    }

    /// A session starts with a launch; after that the GUID set's mix (enrollment calls 50%,
    /// launches 30%, actions 20%), with the device's own management type and enrollment luck.
    mutating func fleetEvent(device: Int, opensSession: Bool) -> (name: String, data: String) {
        let management = device % 10 < 6 ? "MAM-WE" : device % 10 < 9 ? "MDM" : "Unmanaged"
        let kind = opensSession ? 60 : below(100)
        if kind < 50 {
            return ("EnrollmentCall", enrollmentData(code: fleetStatusCode(device: device)))
        } else if kind < 80 {
            return ("AppLaunch", launchData(management: management))
        }
        return ("IntuneAction", actionData())
    }

    /// A failing device answers with its own code four times in five; the rest of the fleet
    /// succeeds (100 and 101) and now and then meets a transient 200.
    mutating func fleetStatusCode(device: Int) -> Int {
        if device % 25 == 0, below(5) > 0 {
            return Self.failingCodes[device / 25 % Self.failingCodes.count]
        }
        return weighted([(100, 55), (101, 43), (200, 2)])
    }
}
