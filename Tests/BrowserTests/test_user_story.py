"""A user's story in the console: the logs of the devices the user used are in it (device
logs name no user), the page says which devices, and every timeline entry opens the logs
around its moment with the page's level filter kept."""

import urllib.parse
from datetime import datetime

from helpers import shot, sign_in, wait_until
from seed import DEVICE, DEVICE_LOG_FAR, DEVICE_LOG_NEAR, UPN


def open_user(page, daemon, token, who):
    sign_in(page, daemon, token)
    page.goto(f"{daemon.base}/console/#/user/{urllib.parse.quote(who)}")
    page.wait_for_selector("#subject-logs-heading")


def test_a_users_story_takes_in_the_logs_of_their_devices(page, daemon, story, out_dir):
    open_user(page, daemon, story["investigator"], UPN)
    assert page.inner_text("#story-devices") == (
        f"The records that name this user, with the logs of device {DEVICE} (the devices they used in this window).")
    assert page.locator("#story-devices a").get_attribute("href") == f"#/device/{DEVICE}"
    # The device's logs name no one, yet they are in the user's log viewer.
    for message in (DEVICE_LOG_NEAR, DEVICE_LOG_FAR):
        page.fill("#subject-logs-search", message.lower()[:30])
        wait_until(page, "document.querySelector('#subject-logs .log-count').dataset.shown === '1'")
    page.fill("#subject-logs-search", "")
    shot(page, out_dir, "10-user-story")


def test_a_timeline_entry_opens_the_logs_around_it_with_the_level_kept(page, daemon, story, out_dir):
    open_user(page, daemon, story["investigator"], UPN)
    page.select_option("#subject-logs-level", "info")
    # Errors only in the timeline (the live-follow test's burst of warnings may precede this
    # one): the entry stays in the list, and the timeline's own filter is not the one kept.
    page.select_option("#timeline-level", "error")
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/v1/logs" in r.url and "around=" in r.url else None)
    entry = page.locator("ol.timeline li[data-status='AccountNotLicensed']")
    entry_time = int(entry.get_attribute("data-time"))
    entry.get_by_role("button", name="logs ± 2 min").click()
    page.wait_for_selector("#around-count")
    # The rows are drawn on the next animation frame, after the count line appears.
    wait_until(page, "document.querySelector('#around-logs .log-count')?.dataset.shown === '2'")
    assert len(requests) == 1
    asked = urllib.parse.parse_qs(urllib.parse.urlparse(requests[0]).query)
    assert asked["span"] == ["2m"] and asked["level"] == ["info"] and asked["identity"] == [UPN]
    around_ms = int(datetime.fromisoformat(asked["around"][0].replace("Z", "+00:00")).timestamp() * 1000)
    assert around_ms == entry_time
    panel = page.inner_text("#around")
    # Within ± 2 min at info and above: the device's own line before the call and the
    # error after it; the verbose lines are below the kept level, the far line out of reach.
    assert DEVICE_LOG_NEAR in panel and "Enrollment failed: AccountNotLicensed" in panel
    assert "token cache lookup" not in panel and "Retry scheduled" not in panel and DEVICE_LOG_FAR not in panel
    assert page.locator("#around-logs .log-count").get_attribute("data-total") == "2"
    assert page.locator("#around-logs-level").input_value() == "info"
    assert "info and above" in page.inner_text("#around-heading")
    # The timeline is left as it was; Close hides the panel.
    assert page.locator("#timeline-level").input_value() == "error"
    shot(page, out_dir, "11-user-around")
    page.locator("#around").get_by_role("button", name="Close").click()
    assert page.locator("#around").is_hidden()


def test_a_pseudonymous_users_story_takes_in_their_devices_too(page, daemon, story):
    # A token without pii names the user by pseudonym; the API widens a pseudonym to the
    # user's devices as it does a UPN, and nothing on the page gives the UPN away.
    sign_in(page, daemon, story["reader"])
    page.goto(f"{daemon.base}/console/#/device/{DEVICE}")
    page.wait_for_selector("#subject-logs-heading")
    page.locator("section.summary a[href^='#/user/']").first.click()
    page.wait_for_selector("#story-devices")
    assert page.inner_text("#story-devices").startswith("The records that name this user, with the logs of device ")
    assert page.locator("#story-devices a").first.get_attribute("href") == f"#/device/{DEVICE}"
    page.fill("#subject-logs-search", DEVICE_LOG_NEAR.lower()[:30])
    wait_until(page, "document.querySelector('#subject-logs .log-count').dataset.shown === '1'")
    assert UPN.lower() not in page.content().lower()
