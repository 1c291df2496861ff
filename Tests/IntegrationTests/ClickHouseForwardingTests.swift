import Foundation
import TestSupport
import Testing

/// The ClickHouse backend end to end: the built daemon spools, forwards to a private
/// clickhouse-server 18.16, and releases the spool only after ClickHouse acknowledged. The
/// spool's cap while ClickHouse is down is TelemetryServerTests.ClickHouseSpoolCapRouteTests.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseForwardingTests {
    static func daemon(_ urls: [URL], database: String) throws -> DaemonProcess {
        try DaemonProcess(
            extraArguments: [
                "--store-backend", "clickhouse", "--clickhouse-url", urls.map(\.absoluteString).joined(separator: ","),
                "--clickhouse-database", database, "--collector-id", "7",
            ])
    }

    /// Waits until `sql` answers `expected` (the forwarder works in the background).
    static func eventually(_ server: PrivateClickHouse, _ sql: String, _ expected: String) async throws -> String {
        var last = ""
        for _ in 0..<150 {
            last = try await server.query(sql)
            if last == expected { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }

    @Test func recordsArriveExactlyOncePPEApartAndOptedOutNowhere() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let d = try Self.daemon(server.urls, database: "fwd")
        try await d.start()
        defer { d.cleanUp() }
        var lines: [String] = []
        for i in 0..<300 {
            lines.append(
                #"{"name":"EnrollmentCall","appId":"com.a","deviceId":"dev-\#(i % 5)","eventId":"e\#(i)","data":{"operation":"enroll","statusCode":100}}"#
            )
        }
        lines.append(#"{"name":"AppLaunch","appId":"com.ppe","deviceId":"p1","settings":{"MAMTelemetryUsePPE":true}}"#)
        lines.append(
            #"{"name":"AppLaunch","appId":"com.optout","deviceId":"o1","data":{"marker":"OPTED-OUT-MARKER-42"},"settings":{"MAMTelemetryDisabled":true}}"#
        )
        let (status, answer, _) = try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8))
        #expect(status == 200, "\(String(decoding: answer, as: UTF8.self))")
        let prod = try await Self.eventually(server, "SELECT count(), uniqExact(id) FROM fwd.records FINAL FORMAT TSV", "300\t300\n")
        #expect(prod == "300\t300\n")
        #expect(try await server.query("SELECT count() FROM fwd.records WHERE app = 'com.ppe' FORMAT TSV") == "0\n")
        let ppe = try await Self.eventually(server, "SELECT app, collector FROM fwd_ppe.records FORMAT TSV", "com.ppe\t7\n")
        #expect(ppe == "com.ppe\t7\n")
        // The opted-out marker is in no table of any database.
        let columns = try await server.query(
            "SELECT database, table, name FROM system.columns WHERE database LIKE 'fwd%' AND type LIKE '%String%' FORMAT TSV")
        var searched = 0
        for row in columns.split(separator: "\n") {
            let p = row.split(separator: "\t")
            let found = try await server.query(
                "SELECT count() FROM \(p[0]).\(p[1]) WHERE positionCaseInsensitive(ifNull(\(p[2]), ''), 'OPTED-OUT-MARKER') > 0 FORMAT TSV")
            #expect(found == "0\n", "marker in \(row)")
            searched += 1
        }
        #expect(searched > 10)
        // The spool is empty again once everything is acknowledged.
        let (_, ready) = try await d.get("/readyz")
        #expect(String(decoding: ready, as: UTF8.self).contains("spool 0 records"))
    }

    /// Re-sending a spooled batch (a crash between ClickHouse's acknowledgement and the
    /// spool's delete) inserts identical rows; `FINAL` shows each record once.
    @Test func aResentBatchIsInvisibleWithFinal() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let d = try Self.daemon(server.urls, database: "dup")
        try await d.start()
        defer { d.cleanUp() }
        let body = (0..<50).map { _ in #"{"name":"IntuneAction","appId":"com.d","deviceId":"x","data":{"action":"PinPrompt"}}"# }
        #expect(try await d.post("/v1/telemetry", body: Array(body.joined(separator: "\n").utf8)).0 == 200)
        #expect(try await Self.eventually(server, "SELECT count() FROM dup.records FORMAT TSV", "50\n") == "50\n")
        // What a redelivery writes: the same rows again, in a second insert (another part).
        _ = try await server.query("INSERT INTO dup.records SELECT * FROM dup.records")
        #expect(try await server.query("SELECT count() FROM dup.records FORMAT TSV") == "100\n")
        #expect(try await server.query("SELECT count() FROM dup.records FINAL FORMAT TSV") == "50\n")
        #expect(try await server.query("SELECT count() FROM (SELECT id FROM dup.records LIMIT 1 BY id, collector) FORMAT TSV") == "50\n")
    }
}

/// A client retry (same kind, app and `eventId`) that arrives after the original was shipped
/// and left the spool is still recognised by the collector: ClickHouse holds the record once.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRetryTests {
    @Test func aRetryAfterShippingIsNotStoredAgain() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let d = try ClickHouseForwardingTests.daemon(server.urls, database: "retry")
        try await d.start()
        defer { d.cleanUp() }
        let body = Array(#"{"name":"AppLaunch","appId":"com.r","deviceId":"d1","eventId":"retry-1"}"#.utf8)
        #expect(try await d.post("/v1/telemetry", body: body).0 == 200)
        let shipped = try await ClickHouseForwardingTests.eventually(server, "SELECT count() FROM retry.records FORMAT TSV", "1\n")
        #expect(shipped == "1\n")
        // Shipped means the batch left the spool.
        var ready = ""
        for _ in 0..<50 {
            ready = String(decoding: try await d.get("/readyz").1, as: UTF8.self)
            if ready.contains("spool 0 records") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ready.contains("spool 0 records"), "\(ready)")
        let (status, answer, _) = try await d.post("/v1/telemetry", body: body)
        let text = String(decoding: answer, as: UTF8.self)
        #expect(status == 200)
        #expect(text.contains(#""duplicate":1"#) && text.contains(#""accepted":0"#), "\(text)")
        // Give the forwarder time to ship anything it had (it polls every 200 ms).
        try await Task.sleep(for: .seconds(1))
        #expect(try await server.query("SELECT count() FROM retry.records FORMAT TSV") == "1\n")
    }
}
