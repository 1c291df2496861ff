"""Live follow marks late arrivals: a record the device wrote 20 minutes before it reached
the daemon is shown as it arrives with "arrived 20 min late"; one on time, and one from a
diagnostic upload (old on purpose), are not marked."""

from datetime import datetime, timedelta, timezone

from helpers import CONTRAST, shot, sign_in, wait_until
from seed import APP, iso

LATE_DEVICE = "iphone-late-0001"


def test_the_late_rule_and_its_words(page, daemon):
    page.goto(daemon.base + "/console/")
    result = page.evaluate("""async () => {
        const late = await import('./late.js');
        const M = 60000;
        return {
            spoken: [20 * M + 59000, 185 * M, (2 * 24 + 4) * 60 * M + 5 * M, 47 * 60 * M].map(late.spokenDelay),
            marks: [{ arrivalDelayMs: 59999 }, { arrivalDelayMs: 60000 }, { arrivalDelayMs: 90 * M, incident: 'MAM-7K2Q-9XPF' }, {}]
                .map(late.lateText),
        };
    }""")
    assert result["spoken"] == ["20 min", "3 h 5 min", "2 d 4 h", "47 h 0 min"]
    assert result["marks"] == [None, "arrived 1 min late", None, None]


def test_follow_marks_records_that_arrive_late(page, daemon, story, out_dir):
    sign_in(page, daemon, story["support"])
    page.goto(f"{daemon.base}/console/#/device/{LATE_DEVICE}")
    page.wait_for_selector("#subject-logs-heading")
    page.get_by_role("button", name="Follow").click()
    wait_until(page, "document.querySelector('.follow-state').textContent.startsWith('Following')")
    now = datetime.now(timezone.utc)
    base = {"appId": APP, "deviceId": LATE_DEVICE, "component": "Sync"}
    daemon.post_ndjson("/v1/logs", [
        {**base, "time": iso(now), "level": "info", "message": "written just now"},
        {**base, "time": iso(now - timedelta(minutes=20, seconds=10)), "level": "warning", "message": "written 20 minutes ago"},
    ])
    daemon.post_json("/v1/diagnostics", {"appId": APP, "deviceId": LATE_DEVICE, "description": "late test",
                                         "logs": [{"time": iso(now - timedelta(minutes=45)), "level": "info", "message": "shared from the past"}]})
    wait_until(page, "Number(document.querySelector('#subject-logs .log-count').dataset.total) === 3", 15)
    rows = {r["message"]: r["late"] for r in page.locator("#subject-logs .log-row:not([hidden])").evaluate_all(
        "els => els.map((e) => ({ message: e.querySelector('.log-message').textContent, late: e.querySelector('.log-late').textContent }))")}
    assert rows == {"written just now": "", "written 20 minutes ago": "arrived 20 min late", "shared from the past": ""}
    late_row = page.locator("#subject-logs .log-row.late")
    assert late_row.count() == 1 and late_row.locator(".log-late").is_visible()
    assert page.evaluate(CONTRAST) == []
    shot(page, out_dir, "12-follow-late")
    page.get_by_role("button", name="Stop following").click()
