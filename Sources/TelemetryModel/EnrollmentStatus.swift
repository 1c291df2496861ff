/// The SDK's `IntuneMAMEnrollmentStatus` codes. Queries, stats and bundles
/// show the symbolic name beside the number; codes we do not know stay plain numbers.
public enum EnrollmentStatus {
    /// Symbolic names by code, as documented for the SDK.
    public static let names: [Int: String] = [
        100: "NewPoliciesReceived",
        101: "PoliciesHaveNotChanged",
        102: "WipeReceived",
        103: "NoPolicyReceived",
        104: "UnenrollmentSuccess",
        200: "AccountNotLicensed",
        201: "InternalError",
        202: "MamServiceDisabled",
        203: "AuthRequired",
        204: "LocationServiceFailure",
        205: "EnrollmentEndPointNetworkFailure",
        206: "ParsingFailure",
        207: "NilAccount",
        208: "AlreadyEnrolled",
        209: "NotEmmAccount",
        210: "MdmEnrolledDifferentUser",
        211: "NotDeviceAccount",
        212: "PolicyEndPointNetworkFailure",
        213: "AppNotEnrolled",
        214: "NotEnrolledAccount",
        215: "FailedToClearMamData",
        216: "Timeout",
        217: "ADALInternalError",
        218: "SwitchExistingAccount",
        219: "LoginCanceled",
        220: "PolicyRecordGone",
        221: "ReEnrollForUnenrolledUser",
        222: "TenantMigration",
        223: "UnsupportedAPI",
        224: "ADALMethodUnsupported",
        225: "LicensedNotTargeted",
        226: "DeviceBlockedEnrollment",
        227: "SingleManagedAccountMode",
    ]

    /// The symbolic name of a code, or nil for a code the SDK documentation does not list.
    public static func name(of code: Int) -> String? { names[code] }

    /// "AccountNotLicensed (200)", or "999" for an unknown code: the form people read.
    public static func label(of code: Int) -> String {
        if let name = names[code] { return "\(name) (\(code))" }
        return String(code)
    }

    /// 1xx codes are successes, 2xx failures (the SDK's own split).
    public static func isSuccess(_ code: Int) -> Bool { (100..<200).contains(code) }
}
