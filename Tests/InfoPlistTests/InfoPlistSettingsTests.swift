import Foundation
import InfoPlist
import TelemetryModel
import Testing

@Suite struct InfoPlistSettingsTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/FuzzPlist")

    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>CFBundleIdentifier</key><string>com.contoso.outlook</string>
          <key>CFBundleVersion</key><string>4.2411</string>
          <key>IntuneMAMSettings</key><dict>
            <key>MAMTelemetryDisabled</key><true/>
            <key>MAMTelemetryUsePPE</key><string>YES</string>
            <key>ADALClientId</key><string>x</string>
          </dict>
        </dict></plist>
        """

    @Test func readsIntuneSettingsFromAnXMLInfoPlist() throws {
        let s = try InfoPlistSettings(data: Data(Self.xml.utf8))
        #expect(s.bundleId == "com.contoso.outlook")
        #expect(s.flags == AppFlags(telemetryDisabled: true, usePPE: true))
    }

    @Test func readsTheSameFromABinaryPlist() throws {
        let object: [String: Any] = [
            "CFBundleIdentifier": "com.contoso.teams",
            "IntuneMAMSettings": ["VerboseLoggingEnabled": true, "MAMTelemetryDisabled": false],
        ]
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        #expect(binary.starts(with: Array("bplist00".utf8)))
        let s = try InfoPlistSettings(data: binary)
        #expect(s.bundleId == "com.contoso.teams")
        #expect(s.flags == AppFlags(telemetryDisabled: false, verboseLogging: true))
    }

    @Test func readsAnOlderSDKsMAMEnvironmentPlist() throws {
        let xml = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>UsePPE</key><true/></dict></plist>"#
        let s = try InfoPlistSettings(data: Data(xml.utf8))
        #expect(s.bundleId == nil)
        #expect(s.flags.usePPE == true)
    }

    @Test func refusesWhatIsNotAPlistDictionaryWithoutCrashing() throws {
        #expect(throws: InfoPlistSettings.ReadError.self) { try InfoPlistSettings(data: Data("not a plist".utf8)) }
        let regression = try Data(contentsOf: Self.corpus.appendingPathComponent("regression-bplist-set"))
        #expect(throws: InfoPlistSettings.ReadError.self) { try InfoPlistSettings(data: regression) }
    }
}
