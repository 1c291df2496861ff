"""The story the browser tests look at, relative to now so the console's default windows
(last 3 days, last 7 days) hold it: one user's iPad whose first enrollment failed
(AccountNotLicensed), was retried 24 h later and succeeded, checked in 8 h after that, then
failed a check-in and shared its logs with support. Plus a small fleet for the charts."""

import random
from datetime import datetime, timedelta, timezone

APP = "com.contoso.outlook"
DEVICE = "ipad-7F3A"
UPN = "Jane.Doe@Contoso.com"
DESCRIPTION = "Outlook says my account is not licensed and attachments will not open"
HOUR = timedelta(hours=1)
DEVICE_LOG_NEAR = "Enrollment request sent to the MAM service"
DEVICE_LOG_FAR = "Keychain item not found, signing in again"
# Characters of an incident id that a person may misread as one outside the alphabet.
MISREADINGS = {"Q": "0", "D": "o", "J": "1", "T": "i", "7": "l", "W": "v"}


def iso(t):
    return t.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def seed(d):
    now = datetime.now(timezone.utc)
    first = now - 40 * HOUR
    retry = first + 24 * HOUR
    check_in = retry + 8 * HOUR
    failed_check_in = now - 12 * timedelta(minutes=1)
    common = {"appId": APP, "deviceId": DEVICE, "identity": UPN, "appVersion": "4.2.1", "sdkVersion": "19.4.0",
              "platform": "iOS", "sessionId": "s-1", "settings": {"VerboseLoggingEnabled": True}}

    def event(i, name, t, data):
        return {**common, "eventId": f"story-{i}", "name": name, "time": iso(t), "data": data}

    story = [
        event(1, "AppLaunch", first - timedelta(seconds=5), {"managementType": "MAM-WE"}),
        event(2, "EnrollmentCall", first, {"operation": "enroll", "api": "registerAndEnrollAccount", "statusCode": 200,
                                           "didSucceed": False, "durationMs": 812, "errorString": "account not licensed"}),
        event(3, "AppLaunch", retry - timedelta(seconds=5), {"managementType": "MAM-WE"}),
        event(4, "EnrollmentCall", retry, {"operation": "enroll", "api": "retry", "statusCode": 100, "didSucceed": True, "durationMs": 640}),
        event(5, "IntuneAction", retry + timedelta(minutes=2), {"action": "PinPrompt", "result": "completed"}),
        event(6, "EnrollmentCall", check_in, {"operation": "policyCheckIn", "api": "autoEnrollOnLaunch", "statusCode": 101,
                                              "didSucceed": True, "durationMs": 210}),
        event(7, "AppLaunch", failed_check_in - timedelta(minutes=3), {"managementType": "MAM-WE"}),
        event(8, "EnrollmentCall", failed_check_in, {"operation": "policyCheckIn", "api": "autoEnrollOnLaunch", "statusCode": 212,
                                                     "didSucceed": False, "durationMs": 30012, "errorString": "The request timed out."}),
        event(9, "IntuneAction", failed_check_in + timedelta(minutes=2), {"action": "SaveAsBlocked", "result": "blocked"}),
    ]
    d.post_ndjson("/v1/telemetry", story)

    def log(t, level, message, component="MAMPolicy"):
        return {**common, "time": iso(t), "level": level, "message": message, "component": component}

    d.post_ndjson("/v1/logs", [
        log(first + timedelta(seconds=1), "error", "Enrollment failed: AccountNotLicensed", "Enrollment"),
        log(first + timedelta(seconds=2), "verbose", f"token cache lookup for {UPN}", "Auth"),
        log(retry + timedelta(seconds=1), "info", "Enrollment succeeded, policy applied", "Enrollment"),
        log(check_in + timedelta(seconds=1), "info", "Policy unchanged", "MAMPolicy"),
        log(failed_check_in + timedelta(seconds=1), "warning", "Policy check-in slow: 30012 ms", "MAMPolicy"),
        log(failed_check_in + timedelta(seconds=2), "error", "Policy check-in failed: network unreachable", "MAMPolicy"),
    ])
    # The device's own logs name no user: only a user page that takes in the user's devices
    # shows them (one beside the failed enrollment, one far from it).
    device_only = {k: v for k, v in common.items() if k != "identity"}
    d.post_ndjson("/v1/logs", [
        {**device_only, "time": iso(first - timedelta(seconds=30)), "level": "info", "message": DEVICE_LOG_NEAR, "component": "Enrollment"},
        {**device_only, "time": iso(first + timedelta(seconds=4)), "level": "verbose", "message": "Retry scheduled in 24 h", "component": "Enrollment"},
        {**device_only, "time": iso(check_in + timedelta(minutes=30)), "level": "warning", "message": DEVICE_LOG_FAR, "component": "Keychain"},
    ])

    # The upload the user makes from the diagnostic console. Its id is random; upload again
    # (the user pressing "share" twice) until it holds a character people misread, so the
    # sloppy-id test really exercises the look-alike guessing.
    incident = None
    for attempt in range(12):
        answer = d.post_json("/v1/diagnostics", {
            "appId": APP, "deviceId": DEVICE, "identity": UPN, "sessionId": "s-1", "description": DESCRIPTION,
            "settings": {"VerboseLoggingEnabled": True},
            "logs": [
                {"time": iso(now - timedelta(minutes=9)), "level": "info", "message": "User opened attachment report.pdf", "component": "Attachments"},
                {"time": iso(now - timedelta(minutes=8)), "level": "warning", "message": "Open-in blocked by app protection policy", "component": "Policy"},
                {"time": iso(now - timedelta(minutes=7)), "level": "error", "message": "Attachment open failed: policy not refreshed", "component": "Attachments"},
                {"time": iso(now - timedelta(minutes=6)), "level": "verbose", "message": f"identity switch to {UPN}", "component": "Identity"},
            ]})
        incident = answer["incident"]["id"]
        if any(c in MISREADINGS for c in incident[4:]):
            break
    seed_fleet(d, now)
    return {"incident": incident, "now": now}


def sloppy(incident):
    """How a person might type it: lower case, no dashes, one look-alike misread."""
    symbols = incident[4:].replace("-", "")
    for i, c in enumerate(symbols):
        if c in MISREADINGS:
            symbols = symbols[:i] + MISREADINGS[c] + symbols[i + 1:]
            break
    return ("mam " + symbols[:4] + symbols[4:]).lower()


def seed_fleet(d, now):
    rng = random.Random(20261121)
    codes = [100, 100, 100, 101, 101, 100, 200, 203, 212, 216, 100, 101]
    types = ["MDM", "MAM-WE", "MAM-WE", "Unmanaged"]
    records = []
    for i in range(400):
        t = now - timedelta(minutes=rng.randrange(0, 7 * 24 * 60))
        code = rng.choice(codes)
        device = f"fleet-{i % 60:03d}"
        app = "com.contoso.teams" if i % 3 else APP
        records.append({"name": "EnrollmentCall", "appId": app, "deviceId": device, "eventId": f"fleet-e{i}", "time": iso(t),
                        "data": {"operation": rng.choice(["enroll", "policyCheckIn", "policyCheckIn"]), "statusCode": code,
                                 "didSucceed": code < 200, "durationMs": rng.randrange(80, 2400)}})
        records.append({"name": "AppLaunch", "appId": app, "deviceId": device, "eventId": f"fleet-l{i}", "time": iso(t - timedelta(seconds=3)),
                        "data": {"managementType": rng.choice(types)}})
        if i % 5 == 0:
            records.append({"name": "IntuneAction", "appId": app, "deviceId": device, "eventId": f"fleet-a{i}", "time": iso(t),
                            "data": {"action": rng.choice(["PinPrompt", "AppRestart", "SaveAsBlocked", "ConditionalLaunch", "SelectiveWipe"])}})
    # An opted-out app's event (dropped at the edge) and a malformed line, for the drops chart.
    records.append({"name": "AppLaunch", "appId": "com.contoso.optout", "deviceId": "x", "eventId": "optout-1",
                    "settings": {"MAMTelemetryDisabled": True}, "data": {"managementType": "MDM"}})
    d.post_ndjson("/v1/telemetry", records)
    status, _ = d.request("POST", "/v1/telemetry", '{"name": "AppLaunch", "appId": 5}\n{"name":"AppLaunch","appId":"com.contoso.teams","eventId":"ok-after-bad"}',
                          content_type="application/x-ndjson")
    assert status == 200
