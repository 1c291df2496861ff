"""The fleet page for a support lead: known apps to pick from, a per-app table whose rates
carry their volume and the change against the previous period, failing status codes with
the devices and users they reached and what they mean, the bucket still filling marked
"so far", plain titles, and the alerts' links (#/fleet?app=…&env=…&code=…)."""

import json
import time
from datetime import datetime, timezone

from helpers import CONTRAST, shot, sign_in, wait_until
from seed import APP, iso


def percent(v):
    return f"{round(v * 1000) / 10:g}%"


def open_fleet(page, daemon, token, hash_query=""):
    """Opens the fleet page and returns the stats/apps answer its table was drawn from."""
    sign_in(page, daemon, token)
    with page.expect_response(lambda r: "/v1/stats/apps" in r.url and "since=-30d" not in r.url) as answer:
        page.goto(f"{daemon.base}/console/#/fleet{hash_query}")
    page.wait_for_selector("#apps-table")
    return json.loads(answer.value.body())


def test_the_app_table_shows_rates_with_volume_and_the_change(page, daemon, story, out_dir):
    stats = open_fleet(page, daemon, story["support"])
    assert page.locator("#fleet-window").input_value() == "24h"
    # Known apps to pick from (a wide window: apps quiet today are offered too).
    options = page.locator("#fleet-app option").evaluate_all("els => els.map((e) => e.value)")
    assert options[0] == "" and {APP, "com.contoso.teams"} <= set(options[1:])
    rows = page.locator("#apps-table tbody tr").evaluate_all(
        "els => els.map((e) => [e.dataset.app, ...[...e.children].map((c) => c.textContent)])")
    assert [r[0] for r in rows] == [a["appId"] for a in stats["apps"]] and len(rows) >= 2
    for row, app in zip(rows, stats["apps"]):
        e = app["enrollment"]
        assert row[2] == f"{e['calls']:,}"
        assert row[3] == f"{percent(e['failureRate'])} of {e['succeeded'] + e['failed']:,}"
        assert row[5] == f"{e['devicesFailing']:,}" and row[6] == f"{e['usersFailing']:,}"
        # The seed spreads calls over 7 days, so the previous 24 hours have calls too.
        assert e["previous"]["calls"] > 0
        diff = round(e["change"]["failureRate"] * 1000) / 10
        words = "same" if diff == 0 else f"{'+' if diff > 0 else '−'}{abs(diff):.1f} points"
        assert f"failure rate {words}" in row[4]
        assert f"before: {percent(e['previous']['failureRate'])} failed of {e['previous']['calls']:,} calls" in row[4]
    # Failing codes only, each with its devices, users and what to do.
    codes = page.locator("#codes-table tbody tr").evaluate_all("els => els.map((e) => [e.dataset.app, e.dataset.code, e.children[6].textContent])")
    expected = [(a["appId"], str(c["statusCode"])) for a in stats["apps"] for c in a["enrollment"]["statusCodes"] if c["success"] is False]
    assert [(a, c) for a, c, _ in codes] == expected
    licence = [x for _, c, x in codes if c == "200"]
    assert licence and all("Assign an Intune license" in x for x in licence)
    assert page.evaluate(CONTRAST) == []
    shot(page, out_dir, "14-fleet-apps")
    # Picking an app from the table narrows the page to it.
    page.locator(f"#apps-table tbody tr[data-app='{APP}'] th a").click()
    wait_until(page, f"location.hash.includes('app={APP}') && document.getElementById('fleet-app').value === '{APP}'")


def calls_in_the_current_hour(daemon):
    """Puts enrollment calls and a launch into the hour the page will show as filling. The story spreads
    its fleet over 7 days, so the current hour holds calls only by chance: in an hour's first
    minutes (or once the hour turned after seeding) it held none, its share had no point, and
    this test failed at 12:00. Waits out the last seconds of an hour, so the calls and the
    page fall in the same one."""
    now = datetime.now(timezone.utc)
    to_next_hour = 3600 - (now.minute * 60 + now.second + now.microsecond / 1e6)
    if to_next_hour < 10:
        time.sleep(to_next_hour + 0.5)
    now = datetime.now(timezone.utc)
    daemon.post_ndjson("/v1/telemetry", [
        {"name": "EnrollmentCall", "appId": "com.contoso.teams", "deviceId": "fleet-000", "eventId": f"filling-{n}-{now.timestamp()}",
         "time": iso(now), "data": {"operation": "policyCheckIn", "statusCode": code, "didSucceed": code < 200, "durationMs": 300}}
        for n, code in enumerate([100, 212])] + [
        {"name": "AppLaunch", "appId": "com.contoso.teams", "deviceId": "fleet-000", "eventId": f"filling-l-{now.timestamp()}",
         "time": iso(now), "data": {"managementType": "MDM"}}])


def test_the_partial_bucket_is_marked_and_titles_are_plain(page, daemon, story):
    calls_in_the_current_hour(daemon)
    open_fleet(page, daemon, story["support"])
    page.wait_for_selector("figure.chart svg")
    captions = page.locator("figure.chart figcaption").all_inner_texts()
    assert captions == ["Share of enrollment calls that succeeded", "Failed enrollment calls by status code",
                        "App launches by management type", "Intune actions users met", "Records the daemon did not keep, by reason"]
    # The current hour is still filling: its point is hollow and labelled, its row says so.
    line = page.locator("figure.chart").first
    assert line.locator("circle.partial").count() == 1
    assert line.locator("text.so-far").text_content() == "so far"
    last = line.locator("details tbody tr").last.locator("th").text_content()
    assert last.endswith("(so far)")
    assert line.locator("details tbody tr th", has_text="(so far)").count() == 1
    assert page.locator("figure.chart").nth(2).locator("rect.partial").count() >= 1


def test_the_alert_link_opens_the_app_and_marks_the_code(page, daemon, story, out_dir):
    open_fleet(page, daemon, story["support"], f"?app={APP}&env=prod&code=212")
    assert page.locator("#fleet-app").input_value() == APP
    assert page.locator("#fleet-env").input_value() == "prod"
    assert page.inner_text("#code-note h2") == "Status code 212 PolicyEndPointNetworkFailure"
    assert "Next:" in page.inner_text("#code-note")
    marked = page.locator("#codes-table tr.marked").evaluate_all("els => els.map((e) => [e.dataset.app, e.dataset.code])")
    assert marked == [[APP, "212"]]
    shot(page, out_dir, "15-fleet-alert-link")
