extension EnrollmentStatus {
    /// Every code of the SDK's `IntuneMAMEnrollmentStatus` list, in code order, with its
    /// meaning as the SDK documents it and the step that resolves it. `/v1/status-codes`,
    /// the CLI, bundles and the journald catalog (`systemd/mamtelemetryd.catalog`, checked
    /// against this table by `CatalogTests`) all say what is written here.
    public static let all: [EnrollmentStatusExplanation] = [
        .init(
            code: 100, name: "NewPoliciesReceived", meaning: "The policy request succeeded and the app received new policies.",
            nextStep: "Nothing to do: the app is enrolled and protected."),
        .init(
            code: 101, name: "PoliciesHaveNotChanged",
            meaning: "The policy request succeeded; the policies have not changed since the last check-in.",
            nextStep: "Nothing to do: the app is enrolled and up to date."),
        .init(
            code: 102, name: "WipeReceived", meaning: "The policy request succeeded and carried a selective wipe for the account.",
            nextStep: "Expected after an admin wiped the app's data; if not intended, check the wipe requests in the Intune admin center."),
        .init(
            code: 103, name: "NoPolicyReceived", meaning: "The policy request succeeded, but no app protection policy targets the user.",
            nextStep: "If the app should be protected, assign an app protection policy to the user's group for this app."),
        .init(
            code: 104, name: "UnenrollmentSuccess", meaning: "The user was unenrolled and the account deregistered from the SDK.",
            nextStep: "Nothing to do unless the user did not sign out: then look for an admin wipe or an app that removed the account."),
        .init(
            code: 200, name: "AccountNotLicensed",
            meaning: "The user's tenant uses app protection, but the user has no Intune license.",
            nextStep: "Assign an Intune license to the user; the SDK retries enrollment within 24 hours."),
        .init(
            code: 201, name: "InternalError", meaning: "The SDK failed internally; the errorString holds the detail.",
            nextStep: "Read the errorString and the device's error logs around the call; escalate with a bundle if it repeats."),
        .init(
            code: 202, name: "MamServiceDisabled", meaning: "Obsolete: no longer sent by current SDKs.",
            nextStep: "Update the app to a current SDK version."),
        .init(
            code: 203, name: "AuthRequired", meaning: "The SDK could not get the user's token without the user signing in again.",
            nextStep: "Ask the user to open the app and sign in again."),
        .init(
            code: 204, name: "LocationServiceFailure",
            meaning: "The SDK could not reach the location service that finds the user's Intune endpoint.",
            nextStep: "Check the device's network, proxy and firewall access to Intune's service endpoints; the SDK retries."),
        .init(
            code: 205, name: "EnrollmentEndPointNetworkFailure", meaning: "The SDK could not reach the enrollment endpoint.",
            nextStep: "Check the device's network, proxy and firewall access to Intune's service endpoints; the SDK retries."),
        .init(
            code: 206, name: "ParsingFailure", meaning: "The SDK could not parse the service's answer.",
            nextStep: "Often a proxy rewriting the traffic: check for TLS inspection or a captive portal; else escalate with a bundle."),
        .init(
            code: 207, name: "NilAccount", meaning: "The app asked to enroll without an account (a nil identity).",
            nextStep: "An app defect: report it to the app's developers with the bundle."),
        .init(
            code: 208, name: "AlreadyEnrolled", meaning: "The app asked to enroll but is already enrolled.",
            nextStep: "Usually harmless (a repeated call); check that the enrolled account is the one the user expects."),
        .init(
            code: 209, name: "NotEmmAccount",
            meaning: "The device's management (a third-party EMM) requires a specific account, and this is not it.",
            nextStep: "Have the user sign in with the account their device management provides; the app should remove this one."),
        .init(
            code: 210, name: "MdmEnrolledDifferentUser", meaning: "The device is MDM-enrolled under a different account.",
            nextStep: "Have the user sign in with the account the device is enrolled with, or re-enroll the device for this user."),
        .init(
            code: 211, name: "NotDeviceAccount", meaning: "The account does not match the account the device is managed for.",
            nextStep: "Have the user sign in with the device's managed account; the app should remove this one."),
        .init(
            code: 212, name: "PolicyEndPointNetworkFailure", meaning: "The SDK could not reach the policy endpoint.",
            nextStep: "Check the device's network, proxy and firewall access to Intune's service endpoints; the SDK retries."),
        .init(
            code: 213, name: "AppNotEnrolled", meaning: "The request needs an enrolled app, and the app is not enrolled.",
            nextStep: "Look for an earlier failed enrollment of this device and resolve that one first."),
        .init(
            code: 214, name: "NotEnrolledAccount", meaning: "The account given is not the account the app is enrolled with.",
            nextStep: "Have the user sign in with the enrolled account, or unenroll it before adding another."),
        .init(
            code: 215, name: "FailedToClearMamData", meaning: "The SDK could not clear the account's data.",
            nextStep: "Ask the user to remove and reinstall the app; escalate with a bundle if it repeats."),
        .init(
            code: 216, name: "Timeout", meaning: "The operation timed out.",
            nextStep: "Check the device's network quality around the call; the SDK retries."),
        .init(
            code: 217, name: "ADALInternalError", meaning: "The authentication library failed while getting the user's MAM token.",
            nextStep: "Read the errorString and the authentication library's logs; ask the user to sign in again."),
        .init(
            code: 218, name: "SwitchExistingAccount", meaning: "The enrolled account has to be removed before another can enroll.",
            nextStep: "Expected when a user switches accounts; the app removes the old account first, then enrolls."),
        .init(
            code: 219, name: "LoginCanceled", meaning: "The user cancelled the sign-in prompt.",
            nextStep: "Ask the user to sign in again and finish the prompt."),
        .init(
            code: 220, name: "PolicyRecordGone", meaning: "The service answered that the app's policy record is gone.",
            nextStep: "The SDK re-enrolls; if it keeps failing, check the user's app protection assignment in the Intune admin center."),
        .init(
            code: 221, name: "ReEnrollForUnenrolledUser", meaning: "A re-enrollment was asked for a user who is no longer enrolled.",
            nextStep: "Have the user sign in again so the app enrolls them from the start."),
        .init(
            code: 222, name: "TenantMigration", meaning: "The tenant is being migrated, or the user is not licensed for app protection.",
            nextStep: "Check the user's Intune license; if licensed, wait for the tenant migration to finish (the SDK retries)."),
        .init(
            code: 223, name: "UnsupportedAPI", meaning: "Enrollment was attempted from an app extension, which the SDK does not support.",
            nextStep: "An app defect: enrollment must run in the main app; report it to the app's developers."),
        .init(
            code: 224, name: "ADALMethodUnsupported", meaning: "The linked authentication library is too old for this call.",
            nextStep: "The app must be rebuilt with a supported authentication library; report it to the app's developers."),
        .init(
            code: 225, name: "LicensedNotTargeted",
            meaning: "The user is licensed for Intune, but no app protection policy targets them for this app.",
            nextStep: "Assign an app protection policy covering this app to a group the user is in."),
        .init(
            code: 226, name: "DeviceBlockedEnrollment", meaning: "The device blocked the enrollment.",
            nextStep: "Check the device's management restrictions (MDM profile or device settings) that block app enrollment."),
        .init(
            code: 227, name: "SingleManagedAccountMode", meaning: "Only one managed account is allowed, and another is enrolled.",
            nextStep: "Have the user remove the other managed account from the app, then sign in with this one."),
    ]
}
