"""Forgiving device ids in the console: the daemon reads a device id typed in another case or
cut short, and the device page says how it read it; an ambiguous prefix lists the devices it
could mean and an id that matches nothing offers the nearest ones, each a link."""

import urllib.parse

from helpers import sign_in
from seed import DEVICE


def open_device(page, daemon, token, typed):
    sign_in(page, daemon, token)
    page.goto(f"{daemon.base}/console/#/device/{urllib.parse.quote(typed)}")
    page.wait_for_selector("#subject-logs-heading, .error")


def test_another_case_is_read_as_the_device_and_said_so(page, daemon, story):
    open_device(page, daemon, story["investigator"], DEVICE.upper())
    note = page.inner_text("#device-match")
    assert note.startswith(f"Showing device {DEVICE}: the device id equal, ignoring case, to")
    assert page.locator("#device-match a").get_attribute("href") == f"#/device/{DEVICE}"
    # The records are the device's: its own log line is in the viewer.
    assert int(page.locator("#subject-logs .log-count").get_attribute("data-total")) > 0


def test_a_unique_prefix_is_read_as_the_device(page, daemon, story):
    open_device(page, daemon, story["reader"], DEVICE[:6].lower())
    assert f"the one device id starting with “{DEVICE[:6].lower()}”" in page.inner_text("#device-match")
    assert page.locator("#device-match a").get_attribute("href") == f"#/device/{DEVICE}"


def test_an_ambiguous_prefix_lists_the_devices_it_could_mean(page, daemon, story):
    page.expected_statuses.add(400)  # the daemon refuses the ambiguous id: ambiguous_device
    open_device(page, daemon, story["reader"], "fleet-00")
    box = page.locator(".error")
    assert "Did you mean one of these?" in box.inner_text()
    links = [a.get_attribute("href") for a in box.locator("a").all()]
    assert len(links) >= 2 and all(link.startswith("#/device/fleet-00") for link in links)
    box.locator("a").first.click()
    page.wait_for_selector("#subject-logs-heading")
    assert page.locator("#device-match").count() == 0, "an exact id needs no note"


def test_an_id_matching_nothing_offers_the_nearest(page, daemon, story):
    typo = DEVICE[:-1] + "B"
    open_device(page, daemon, story["reader"], typo)
    note = page.inner_text("#device-match")
    assert note.startswith(f"No records of device {typo} in production in this window.")
    assert f"#/device/{DEVICE}" in [a.get_attribute("href") for a in page.locator("#device-match a").all()]
