/// zlib preset dictionaries of segments: the envelope's field names and common values, so
/// the first records of each stream already compress as back-references. zlib favours the
/// dictionary's end (shortest distances), so the most frequent text comes last.
///
/// Never change these bytes: every stored segment was written with them and cannot be
/// read without them (zlib checks the dictionary's Adler-32 when inflating). A new
/// dictionary needs a new segment marker.
enum SegmentDictionary {
    /// (Line breaks are part of the dictionary: NDJSON has them between records.)
    static let payload: [UInt8] = Array(
        #"""
        "initiatedBy":"user","initiatedBy":"admin","action":"selectiveWipe","action":"wipe",
        "action":"pinPrompt","action":"conditionalLaunchBlock","action":"policyRefresh",
        "action":"saveAsBlocked","name":"IntuneAction","managementType":"Unmanaged","managementType":"MDM",
        "managementType":"MAM-WE","coldStart":true,"coldStart":false,"launchMs":"name":"AppLaunch",
        "operation":"unenrollment","api":"deRegisterAndUnenrollAccount","operation":"mamServiceLookup",
        "api":"lookupMAMServiceURL","operation":"enrollment","api":"registerAndEnrollAccount",
        "api":"autoEnrollOnLaunch","operation":"policyCheckIn","api":"periodicCheckIn",
        "statusCode":"didSucceed":true,"didSucceed":false,"durationMs":"name":"EnrollmentCall",
        "incident":"expired":true,
        "attributes":{"traceId":"spanId":"severity":"component":"MAMPolicyManager"},
        "component":"ConditionalLaunch"},"component":"MAMFileProtection"},"component":"Identity"},
        "component":"Enrollment"},"level":"warning","level":"error","level":"info","level":"verbose",
        "message":"","settings":{"VerboseLoggingEnabled":"YES"},"settings":{"VerboseLoggingEnabled":"NO"},
        "data":{"platform":"Android","platform":"iOS","appVersion":"","sdkVersion":"19.6.","identity":"",
        "accountId":"","tenantId":"","eventId":"","deviceId":"","sessionId":"",
        "appId":"com.microsoft.",{"time":"2026-","time":"2026-","Z",
        """#.utf8)

    static let keys: [UInt8] = Array(
        """
        IntuneActionselectiveWipewipepinPromptconditionalLaunchBlockpolicyRefreshsaveAsBlocked
        UnmanagedMDMMAM-WEunenrollmentmamServiceLookupenrollmentpolicyCheckIn
        MAMPolicyManagerConditionalLaunchMAMFileProtectionIdentityEnrollment
        com.microsoft.AppLaunchEnrollmentCall
        """.utf8)
}
