import TelemetryModel
import Testing

/// The flag resolution table (SPEC §2.3), every combination of the record's own flags, the
/// registry's flags (including "app not registered") and user-initiated uploads.
@Suite struct PrivacyDecisionTests {
    static let tri: [Bool?] = [nil, false, true]

    @Test func everyCombination() {
        var cases = 0
        for recordDisabled in Self.tri {
            for recordPPE in Self.tri {
                for registered in [false, true] {
                    for registryDisabled in Self.tri {
                        for registryPPE in Self.tri {
                            for userInitiated in [false, true] {
                                let record = AppFlags(telemetryDisabled: recordDisabled, usePPE: recordPPE)
                                let registry = registered ? AppFlags(telemetryDisabled: registryDisabled, usePPE: registryPPE) : nil
                                let decision = PrivacyDecision.resolve(record: record, registry: registry, userInitiated: userInitiated)
                                // The oracle, written from the spec's sentence, not from the code.
                                let disabled = recordDisabled == true || (registered && registryDisabled == true)
                                let ppe = recordPPE == true || (registered && registryPPE == true)
                                let expected: PrivacyDecision =
                                    disabled && !userInitiated ? .drop(.telemetryDisabled) : .store(ppe ? .ppe : .prod)
                                #expect(
                                    decision == expected, "record=\(record) registry=\(String(describing: registry)) user=\(userInitiated)")
                                cases += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(cases == 3 * 3 * 2 * 3 * 3 * 2)
    }

    @Test func explicitRowsOfTheTable() {
        let yes = AppFlags(telemetryDisabled: true)
        let no = AppFlags(telemetryDisabled: false)
        #expect(PrivacyDecision.resolve(record: no, registry: yes) == .drop(.telemetryDisabled))
        #expect(PrivacyDecision.resolve(record: yes, registry: no) == .drop(.telemetryDisabled))
        #expect(PrivacyDecision.resolve(record: yes, registry: nil, userInitiated: true) == .store(.prod))
        #expect(
            PrivacyDecision.resolve(record: AppFlags(telemetryDisabled: true, usePPE: true), registry: nil, userInitiated: true)
                == .store(.ppe))
        #expect(PrivacyDecision.resolve(record: AppFlags(usePPE: false), registry: AppFlags(usePPE: true)) == .store(.ppe))
        #expect(PrivacyDecision.resolve(record: .unspecified, registry: nil) == .store(.prod))
    }

    @Test(arguments: [
        (["MAMTelemetryUsePPE": FlagValue.bool(true)], true),
        (["UsePPE": FlagValue.string("YES")], true),
        (["com.microsoft.intune.mam.useppe": FlagValue.string("1")], true),
        (["com.microsoft.intune.mam.useppe": FlagValue.string("0")], false),
        (["MAMTelemetryUsePPE": FlagValue.number(0)], false),
    ])
    func everySpellingOfPPE(settings: [String: FlagValue], expected: Bool) {
        #expect(AppFlags(settings: settings).usePPE == expected)
    }

    @Test func unrecognisedValuesCountAsNotSaid() {
        #expect(AppFlags(settings: ["MAMTelemetryDisabled": .string("maybe")]).telemetryDisabled == nil)
        #expect(AppFlags(settings: ["MAMTelemetryDisabled": .string("YES")]).telemetryDisabled == true)
    }
}
