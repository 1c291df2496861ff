"""The incident list: reachable from the header, newest first, a page at a time, the first
line of what the user wrote (withheld without the pii scope), and the query after the hash
route as the alert's runbook link gives it (#/incidents?env=ppe&since=-1h)."""

import pytest

from helpers import CONTRAST, shot, sign_in, wait_until

APP = "com.contoso.word"
DEVICE = "ppe-tablet-0042"


@pytest.fixture(scope="module")
def uploads(daemon, story):
    """Three PPE uploads, oldest first: (id, first line, records shared)."""
    made = []
    for i, (first_line, logs) in enumerate([("Word crashes on save", 1), ("Cannot paste into Word", 2), ("Word asks for a PIN twice", 3)]):
        answer = daemon.post_json("/v1/diagnostics", {
            "appId": APP, "deviceId": DEVICE, "description": f"{first_line}\nsecond line {i} stays out of the list",
            "settings": {"MAMTelemetryUsePPE": True},
            "logs": [{"level": "info", "message": f"upload {i} line {k}"} for k in range(logs)]})
        made.append((answer["incident"]["id"], first_line, logs))
    return made


def rows(page):
    return page.locator("table.incidents tbody tr").evaluate_all(
        "els => els.map((e) => [...e.children].map((c) => c.textContent))")


def test_the_runbook_link_lists_incidents_newest_first_a_page_at_a_time(page, daemon, story, uploads, out_dir):
    sign_in(page, daemon, story["investigator"])
    page.goto(f"{daemon.base}/console/#/incidents?env=ppe&since=-1h&limit=2")
    page.wait_for_selector("table.incidents")
    assert page.locator("#incidents-env").input_value() == "ppe"
    assert page.locator("#incidents-since").input_value() == "-1h"
    newest = list(reversed(uploads))
    got = rows(page)
    assert [(r[1], r[2], r[3], r[4], r[5]) for r in got] == [(i, APP, DEVICE, line, str(n)) for i, line, n in newest[:2]]
    assert page.locator("table.incidents tbody tr a[href^='#/incident/']").first.get_attribute("href") == f"#/incident/{newest[0][0]}"
    page.get_by_role("button", name="Show older incidents").click()
    wait_until(page, "document.querySelectorAll('table.incidents tbody tr').length === 3")
    assert [r[1] for r in rows(page)] == [i for i, _, _ in newest]
    assert page.locator("#incidents-more").is_hidden()
    assert "3 incidents, newest first." == page.inner_text("#incidents-count")
    assert page.evaluate(CONTRAST) == []
    shot(page, out_dir, "13-incidents")
    # A row opens its incident.
    page.locator(f"a[href='#/incident/{newest[0][0]}']").click()
    page.wait_for_selector("#incident-id")
    assert page.inner_text("#incident-id") == newest[0][0]


def test_the_header_opens_the_list_and_a_read_token_sees_descriptions_withheld(page, daemon, story, uploads):
    sign_in(page, daemon, story["support"])
    page.locator("header nav").get_by_role("link", name="Incidents").click()
    page.wait_for_selector("#incidents-env")
    assert page.locator("header nav a[href='#/incidents']").get_attribute("aria-current") == "page"
    assert page.locator("header nav a[href='#/fleet']").get_attribute("aria-current") is None
    page.select_option("#incidents-env", "ppe")
    wait_until(page, "location.hash.includes('env=ppe') && document.querySelectorAll('table.incidents tbody tr').length === 3")
    for _, first_line, _ in uploads:
        assert first_line not in page.content()
    cells = page.locator("table.incidents td.withheld").all_inner_texts()
    assert len(cells) == 3
    assert all(c.startswith("Withheld (") and c.endswith("a token with the pii scope shows the user's words") for c in cells)
    # The production list holds the seeded story's upload, not these.
    page.select_option("#incidents-env", "prod")
    wait_until(page, "location.hash.includes('env=prod') && document.querySelectorAll('table.incidents tbody tr').length >= 1")
    assert APP not in page.inner_text("table.incidents")
