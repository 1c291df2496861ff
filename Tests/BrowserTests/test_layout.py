"""Every console page on a phone (390 px), a small laptop (1024 px) and a desktop (1280 px): a
screenshot of each, and the layout asserted — no page-wide sideways scrolling, Find and Sign
out on screen, chart and timeline labels drawn at 10 px or more, and on the desktop a header
of one row."""

import urllib.parse

import pytest

from helpers import shot, sign_in
from seed import DEVICE, UPN

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1024, "height": 768}  # where the header collapses: nothing may stick out
DESKTOP = {"width": 1280, "height": 800}

# What a page has drawn once it is complete.
PAGES = [
    ("home", "#/", "main h1", "support"),
    ("incident", "#/incident/{incident}", "#incident-logs .log-row", "support"),
    ("device", f"#/device/{DEVICE}", "#subject-logs .log-row", "support"),
    ("incidents", "#/incidents?since=-7d", "#incidents-count", "support"),
    ("fleet", "#/fleet?window=7d", "#codes-table", "support"),
    ("user", f"#/user/{urllib.parse.quote(UPN)}", "#story-devices", "investigator"),
]

LAYOUT = r"""() => {
    const de = document.documentElement;
    const box = (sel) => { const e = document.querySelector(sel); if (!e || !e.checkVisibility()) return null;
        const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
    // Every chart or strip label at the size it is drawn: font size times the drawing's scale.
    const labels = [...document.querySelectorAll('svg text.axis')].filter((t) => t.checkVisibility()).map((t) => {
        const s = t.ownerSVGElement, vb = s.viewBox.baseVal, r = s.getBoundingClientRect();
        const scale = Math.min(r.width / vb.width, r.height / vb.height);
        return parseFloat(getComputedStyle(t).fontSize) * scale;
    });
    const header = document.querySelector('header.top');
    const items = [...header.querySelectorAll('.brand, #search-kind, #search-text, #search-form button, header nav a, #bundle-button, .who-name, #signout')]
        .filter((e) => e.checkVisibility()).map((e) => e.getBoundingClientRect());
    return {
        width: innerWidth, scrollWidth: Math.max(de.scrollWidth, document.body.scrollWidth),
        find: box('#search-form button'), searchText: box('#search-text'), signout: box('#signout'),
        smallestLabel: labels.length ? Math.min(...labels) : null, labels: labels.length,
        headerHeight: header.getBoundingClientRect().height,
        headerOverflow: header.scrollWidth - header.clientWidth,
        // Header items side by side must not overlap (a squeezed slot lets a button spill over).
        overlaps: items.filter((r) => r.width > 0).sort((a, b) => a.left - b.left).some((r, i, all) =>
            i > 0 && Math.abs((r.top + r.bottom) / 2 - (all[i - 1].top + all[i - 1].bottom) / 2) < 8 && r.left < all[i - 1].right - 1),
        rowSpread: items.length ? Math.max(...items.map((r) => r.top + r.height / 2)) - Math.min(...items.map((r) => r.top + r.height / 2)) : 0,
        // A missing part must not be drawn as the word "null".
        strayNull: /(^|\n)\s*null\s*(\n|$)/.test(document.querySelector('main').innerText),
        logMessage: document.querySelector('.log-row:not([hidden]) .log-message')?.getBoundingClientRect().width ?? null,
    };
}"""


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP, DESKTOP], ids=["390px", "1024px", "1280px"])
def test_every_page_fits_the_screen(browser, daemon, story, out_dir, viewport):
    context = browser.new_context(viewport=viewport, timezone_id="Europe/Berlin", locale="en-GB")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    width = viewport["width"]
    try:
        page.goto(daemon.base + "/console/")
        page.wait_for_selector("#token")
        layout = page.evaluate(LAYOUT)
        assert layout["scrollWidth"] <= width, f"sign-in page is {layout['scrollWidth']} px wide"
        shot(page, out_dir, f"layout-{width}-sign-in")
        signed_in = None
        for name, route, ready, token in PAGES:
            if token != signed_in:
                if signed_in:
                    page.click("#signout")
                sign_in(page, daemon, story[token])
                signed_in = token
            page.goto(daemon.base + "/console/" + route.format(incident=story["incident"]))
            page.wait_for_selector(ready)
            page.wait_for_timeout(100)  # a frame for the virtual log rows
            layout = page.evaluate(LAYOUT)
            shot(page, out_dir, f"layout-{width}-{name}")
            where = f"{name} at {width} px: {layout}"
            assert layout["scrollWidth"] <= width, where
            for control in ("find", "signout"):
                b = layout[control]
                assert b and b["left"] >= 0 and b["right"] <= width and b["bottom"] > 0, where
            if layout["labels"]:
                assert layout["smallestLabel"] >= 10, where
            assert not layout["strayNull"], where
            assert not layout["overlaps"] and layout["headerOverflow"] <= 0, where
            assert layout["searchText"]["right"] - layout["searchText"]["left"] >= 150, where  # room to type an id
            if name != "home" and name != "incidents":
                assert layout["labels"] > 0, where  # the rhythm strip's or the charts' axes
            if width == DESKTOP["width"]:
                # One row: every header item shares the middle line, and the header is one line tall.
                assert layout["rowSpread"] <= 6 and layout["headerHeight"] <= 60, where
            elif width == PHONE["width"] and layout["logMessage"] is not None:
                assert layout["logMessage"] >= 250, where  # a log row shows its message, not ten characters
    finally:
        context.close()
    assert not errors, errors
