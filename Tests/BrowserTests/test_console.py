"""The support console in a real browser (system Chromium driven by Playwright) against the
built daemon with seeded data: sign-in, an incident found from a sloppily typed id, its
timeline in order with status names, live follow under load, a bundle with a valid
manifest, and a read token that never puts a raw UPN in the page."""

import hashlib
import json
import threading
import time
import zipfile

from helpers import CONTRAST, assert_header_fits, shot, sign_in, wait_until
from seed import APP, DESCRIPTION, DEVICE, UPN, sloppy


def test_console_modules_guess_misread_ids_and_build_the_rhythm(page, daemon):
    page.goto(daemon.base + "/console/")
    result = page.evaluate("""async () => {
        const id = await import('./incident-id.js');
        const t = await import('./timeline.js');
        const H = 3600000;
        const call = (i, at, op, code, ok) => ({ id: i, name: 'EnrollmentCall', appId: 'a', deviceId: 'd', time: new Date(at).toISOString(),
            statusName: 'x', data: { operation: op, statusCode: code, didSucceed: ok } });
        const events = [call(1, 0, 'enroll', 200, false), call(2, 24 * H, 'enroll', 100, true), call(3, 50 * H, 'policyCheckIn', 101, true)];
        const entries = t.buildTimeline(events, [], { now: 80 * H });
        const log = (i, at) => ({ id: i, time: new Date(at).toISOString(), level: 'error', message: 'm' + i });
        return {
            exact: id.candidates('mam-7k2q-9xpf').ids,
            zero: id.candidates('MAM 7K20 9XPF').ids,
            one: id.candidates('7k2q91pf').ids,
            bad: id.candidates('MAM-7K2Q').wellFormed,
            expected: entries.filter((e) => e.kind === 'expected').map((e) => [e.time / H, e.status]),
            gaps: entries.filter((e) => e.kind === 'gap').map((e) => e.length / H),
            // A gap is drawn after the record it starts from, never before it.
            order: t.buildTimeline([call(1, 0, 'enroll', 100, true)], [log(2, 0), log(3, 2 * H)], { now: 3 * H })
                .filter((e) => e.kind !== 'expected').map((e) => e.kind + (e.id ?? '')),
        };
    }""")
    assert result["exact"] == ["MAM-7K2Q-9XPF"]
    assert result["zero"] == ["MAM-7K2Q-9XPF", "MAM-7K2D-9XPF"]
    assert result["one"] == ["MAM-7K2Q-9JPF", "MAM-7K2Q-9TPF", "MAM-7K2Q-97PF"]
    assert result["bad"] is False
    # Failed enroll at 0 h: retry due at 24 h, came on time. Enroll at 24 h: check-in due at
    # 32 h, the next call came only at 50 h: missed. Check-in at 50 h: next due at 58 h, and
    # by 80 h nothing came: missed.
    assert result["expected"] == [[24, "seen"], [32, "missed"], [58, "missed"]]
    assert result["gaps"] == [24, 26]
    assert result["order"] == ["enrollment1", "log2", "gap", "log3"]


def test_sign_in_find_incident_by_sloppy_id_and_read_its_timeline(page, daemon, story, out_dir):
    page.goto(daemon.base + "/console")
    assert page.url.endswith("/console/")
    shot(page, out_dir, "01-sign-in")
    sign_in(page, daemon, story["support"])
    assert page.evaluate("sessionStorage.getItem('mamtelemetry.console.token')") == story["support"]
    assert page.evaluate("localStorage.length") == 0
    assert story["support"] not in page.url
    assert "support-desk" in page.inner_text("#who")
    shot(page, out_dir, "02-home")

    typed = sloppy(story["incident"])
    page.get_by_label("Search text").fill(typed)
    page.get_by_role("button", name="Find").click()
    page.wait_for_selector("#incident-id")
    assert page.inner_text("#incident-id") == story["incident"], f"typed {typed!r}"
    assert page.url.endswith(f"#/incident/{story['incident']}")
    summary = page.inner_text("section.summary")
    for expected in (APP, DEVICE, "4.2.1", "19.4.0", "VerboseLoggingEnabled"):
        assert expected in summary
    # The description is the user's free text: without the pii scope the API withholds it
    # (its length and a keyed digest only) and the console shows exactly that.
    assert DESCRIPTION not in page.content()
    assert page.inner_text(".description-withheld") == "The user wrote a description; a token with the pii scope shows the user's words."
    assert "[withheld:" not in summary
    # "Logs cover" is the shared records' own device times (9 to 6 minutes before the
    # upload in the seed), not the upload's arrival.
    status, body = daemon.request("GET", f"/v1/incidents/{story['incident']}", token=story["support"])
    shared = json.loads(body)
    cover = page.locator("#logs-cover time").evaluate_all("els => els.map((e) => e.dateTime)")
    assert [c.replace(".000Z", "Z") for c in cover] == [shared["firstTime"].replace(".000Z", "Z"), shared["lastTime"].replace(".000Z", "Z")]
    assert page.inner_text("#logs-cover").endswith("(3 min)")

    entries = page.locator("ol.timeline > li.entry[data-time]")
    times = [int(t) for t in entries.evaluate_all("els => els.map((e) => e.dataset.time)")]
    assert len(times) >= 12 and times == sorted(times)
    statuses = entries.evaluate_all("els => els.filter((e) => e.dataset.status).map((e) => e.dataset.status)")
    assert statuses == ["AccountNotLicensed", "NewPoliciesReceived", "PoliciesHaveNotChanged", "PolicyEndPointNetworkFailure"]
    text = page.inner_text("ol.timeline")
    assert "enroll → AccountNotLicensed (200) · failed" in text
    assert "policyCheckIn → PolicyEndPointNetworkFailure (212) · failed" in text
    assert "30012 ms" in text
    # A failed call says what its code means and what to do (GET /v1/status-codes).
    explained = page.locator("ol.timeline li[data-status='AccountNotLicensed'] .entry-explain").inner_text()
    assert "no Intune license" in explained and "Next: Assign an Intune license" in explained
    assert page.locator("ol.timeline li[data-status='NewPoliciesReceived'] .entry-explain").count() == 0
    assert "Expected enrollment retry (24 h after enroll) · came on time" in text  # the seed retries exactly 24 h later
    assert "Expected policy check-in (8 h after enroll) · came on time" in text
    assert "Expected policy check-in (8 h after policyCheckIn) · came 12 min early" in text
    assert "Expected policy check-in (8 h after policyCheckIn) · upcoming" in text
    assert "with no records" in text  # the day between the failed enroll and its retry
    # Local time in the page, the UTC instant on hover.
    first_time = page.locator("ol.timeline time").first
    assert first_time.get_attribute("title").endswith(" UTC")
    assert page.locator(".rhythm").get_attribute("aria-label").startswith("Rhythm from")
    wait_until(page, "document.querySelectorAll('#incident-logs .log-viewport .log-row:not([hidden])').length === 4")
    assert page.evaluate(CONTRAST) == []
    page.set_viewport_size({"width": 1440, "height": 1700})  # the whole story in one picture
    shot(page, out_dir, "03-incident")
    page.set_viewport_size({"width": 1440, "height": 1000})

    # One bundle: the incident's, which is the device's story around the upload (its events
    # and logs) with the shared lines among them.
    assert page.locator("#bundle-choice").is_hidden()
    manifest, names = download_bundle(page, out_dir)
    assert manifest["request"]["incident"] == story["incident"]
    assert manifest["request"]["storyDevice"] == DEVICE
    assert manifest["counts"]["telemetry"] == 9 and manifest["counts"]["logs"] > 4
    assert "incident.json" in names


def download_bundle(page, out_dir):
    with page.expect_download() as download:
        page.click("#bundle-button")
    path = out_dir / download.value.suggested_filename
    download.value.save_as(path)
    wait_until(page, "document.getElementById('bundle-state').textContent.startsWith('Saved')")
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        assert manifest["caller"].startswith("support-desk")
        assert manifest["redaction"]["enabled"] is True
        names = set(z.namelist())
        assert {"manifest.json", "telemetry.ndjson", "logs.ndjson", "timeline.txt", "summary.json"} <= names
        assert {f["name"] for f in manifest["files"]} | {"manifest.json"} == names
        for f in manifest["files"]:
            data = z.read(f["name"])
            assert len(data) == f["size"] and hashlib.sha256(data).hexdigest() == f["sha256"], f["name"]
        assert UPN.lower() not in z.read("logs.ndjson").decode().lower()
    return manifest, names


def test_follow_a_device_while_records_arrive_at_1000_per_second(page, daemon, story, out_dir):
    sign_in(page, daemon, story["support"])
    page.goto(f"{daemon.base}/console/#/device/{DEVICE}")
    page.wait_for_selector("#subject-logs-heading")
    count = page.locator("#subject-logs .log-count")
    before = int(count.get_attribute("data-total"))
    page.get_by_role("button", name="Follow").click()
    wait_until(page, "document.querySelector('.follow-state').textContent.startsWith('Following')")

    total, batch = 3000, 100
    posted = []

    def post():
        start = time.monotonic()
        for b in range(total // batch):
            records = [{"appId": APP, "deviceId": DEVICE, "level": ["info", "warning", "verbose", "error"][i % 4],
                        "component": "Burst", "message": f"burst record {b * batch + i:04d}"} for i in range(batch)]
            daemon.post_ndjson("/v1/logs", records)
            posted.append(len(records))
            time.sleep(max(0, start + (b + 1) * batch / 1000 - time.monotonic()))  # 1,000 records/s

    poster = threading.Thread(target=post)
    poster.start()
    worst = 0.0
    while poster.is_alive():
        t0 = time.monotonic()
        page.evaluate("1")  # the page's main thread answers between frames
        worst = max(worst, time.monotonic() - t0)
        time.sleep(0.05)
    poster.join()
    assert sum(posted) == total
    wait_until(page, f"Number(document.querySelector('#subject-logs .log-count').dataset.total) >= {before + total}", 20)
    assert int(count.get_attribute("data-total")) == before + total
    print(f"follow: {total} records, slowest page answer {worst * 1000:.0f} ms")
    assert worst < 1.0, f"the page stalled for {worst:.2f} s while following"
    # Virtualised: only the rows in view exist, and following keeps the newest in view.
    rows = page.locator(".log-viewport .log-row:not([hidden])")
    assert rows.count() < 80
    page.wait_for_selector("text=burst record 2999")
    # Level filter and text search work on the held records.
    page.get_by_role("button", name="Stop following").click()
    page.select_option("#subject-logs-level", "error")
    page.fill("#subject-logs-search", "burst record 29")
    wait_until(page, "document.querySelector('#subject-logs .log-count').dataset.shown === '25'")
    page.fill("#subject-logs-search", "")
    page.select_option("#subject-logs-level", "verbose")
    wait_until(page, f"document.querySelector('#subject-logs .log-count').dataset.shown === '{before + total}'")
    assert page.evaluate(CONTRAST) == []
    shot(page, out_dir, "04-device")


def test_fleet_page_draws_the_stats(page, daemon, story, out_dir):
    sign_in(page, daemon, story["support"])
    page.goto(f"{daemon.base}/console/#/fleet?window=7d")
    page.wait_for_selector("figure.chart svg")
    captions = page.locator("figure.chart figcaption").all_inner_texts()
    assert "Share of enrollment calls that succeeded" in captions
    assert "App launches by management type" in captions
    body = page.inner_text("main")
    for name in ("AccountNotLicensed", "MAM-WE", "Unmanaged", "PinPrompt", "dropped: telemetryDisabled", "policyCheckIn"):
        assert name in body, name
    assert page.locator("#bundle-button").is_disabled()
    page.select_option("#fleet-app", APP)
    wait_until(page, "!document.getElementById('bundle-button').disabled")
    page.wait_for_selector("figure.chart svg")
    assert page.evaluate(CONTRAST) == []
    assert_header_fits(page)  # at 1440 px, with the bundle button enabled
    shot(page, out_dir, "05-fleet")


def test_a_read_token_never_shows_a_raw_upn(page, daemon, story, out_dir):
    sign_in(page, daemon, story["reader"])
    assert page.locator("#bundle-button").count() == 0, "a token without the bundle scope sees no bundle button"
    assert page.inner_text("#who").find("pseudonyms") >= 0

    def check(where):
        html = page.evaluate("""() => document.documentElement.outerHTML + '\\n' + document.body.innerText + '\\n' +
            [...document.querySelectorAll('input')].map((i) => i.value).join('\\n')""")
        assert UPN.lower() not in html.lower(), f"raw UPN in the DOM on {where}"

    check("home")
    page.goto(f"{daemon.base}/console/#/incident/{story['incident']}")
    page.wait_for_selector("#incident-id")
    check("incident")
    user = page.locator("section.summary a[href^='#/user/']")
    pseudonym = user.inner_text()
    assert pseudonym.startswith("user-")
    # Verbose records carry the UPN in their message; show them and open one.
    page.select_option("#incident-logs-level", "verbose")
    page.locator("#incident-logs .log-viewport .log-row.level-verbose").first.click()
    assert "user-" in page.inner_text(".log-detail") or "redacted" in page.inner_text(".log-detail").lower()
    check("incident, verbose record opened")
    shot(page, out_dir, "06-incident-read-token")
    user.click()
    page.wait_for_selector("#subject-logs-heading")
    assert pseudonym in page.inner_text("h1")
    assert "enroll → AccountNotLicensed (200)" in page.inner_text("ol.timeline")
    check("user (pseudonym)")
    shot(page, out_dir, "07-user-pseudonym")
    page.goto(f"{daemon.base}/console/#/device/{DEVICE}")
    page.wait_for_selector("#subject-logs-heading")
    page.select_option("#subject-logs-level", "verbose")
    page.fill("#subject-logs-search", "network unreachable")
    wait_until(page, "document.querySelector('#subject-logs .log-count').dataset.shown === '1'")
    # Verbose text is withheld from this token, so searching for it finds nothing: the
    # search cannot be used to probe text the caller is not allowed to read.
    page.fill("#subject-logs-search", "token cache")
    wait_until(page, "document.querySelector('#subject-logs .log-count').dataset.shown === '0'")
    page.fill("#subject-logs-search", "withheld")
    wait_until(page, "Number(document.querySelector('#subject-logs .log-count').dataset.shown) >= 1")
    page.locator(".log-viewport .log-row:not([hidden])").first.click()
    check("device, verbose record opened")
    page.goto(f"{daemon.base}/console/#/fleet")
    page.wait_for_selector("figure.chart svg")
    check("fleet")


def test_a_pii_token_reads_the_users_own_words(page, daemon, story):
    sign_in(page, daemon, story["investigator"])
    page.goto(f"{daemon.base}/console/#/incident/{story['incident']}")
    page.wait_for_selector("#incident-id")
    assert DESCRIPTION in page.inner_text("section.summary")
    page.select_option("#incident-logs-level", "verbose")
    wait_until(page, "[...document.querySelectorAll('#incident-logs .log-viewport .log-row:not([hidden])')].some((r) => r.textContent.includes('identity switch to'))")
