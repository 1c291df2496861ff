"""What every browser test does: sign in, wait for the page without evaluating strings in
it, check text contrast and take screenshots."""

import time


def sign_in(page, daemon, token):
    page.goto(daemon.base + "/console")
    page.get_by_label("Access token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("#who .who-name")


def wait_until(page, expression, timeout=10.0):
    """Polls a JavaScript expression from outside the page: Playwright's wait_for_function
    evaluates strings inside the page, which the console's content security policy forbids
    (the tests keep the policy on, so they run the console as a user's browser does)."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for: {expression}")
        time.sleep(0.05)


# WCAG contrast of every visible text against the first opaque background behind it.
CONTRAST = """() => {
    const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
        .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const background = (el) => {
        for (; el; el = el.parentElement) {
            const c = rgb(getComputedStyle(el).backgroundColor);
            if (c.length === 3 || c[3] > 0.9) return c;
        }
        return [255, 255, 255];
    };
    const low = [];
    for (const el of document.querySelectorAll('body *')) {
        if (!el.checkVisibility() || el.closest('svg, :disabled, [aria-hidden=true]')) continue;
        if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
        const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5) low.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)} '${el.textContent.trim().slice(0, 30)}'`);
    }
    return low;
}"""


def shot(page, out_dir, name):
    page.screenshot(path=str(out_dir / f"{name}.png"), full_page=True)


def assert_header_fits(page):
    """The header's items fit its width: none spills past Sign out or off the screen, and
    none is drawn over its neighbour (a squeezed slot lets a button spill over the next)."""
    fit = page.evaluate("""() => {
        const h = document.querySelector('header.top');
        const items = [...h.querySelectorAll('.brand, #search-form, header nav, #bundle-button, .bundle-state, .who, #signout')]
            .filter((e) => e.checkVisibility()).map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0)
            .sort((a, b) => a.left - b.left);
        const overlaps = items.some((r, i) => i > 0 && Math.abs((r.top + r.bottom) / 2 - (items[i - 1].top + items[i - 1].bottom) / 2) < 8
            && r.left < items[i - 1].right - 1);
        return { overflow: h.scrollWidth - h.clientWidth, signoutRight: document.getElementById('signout').getBoundingClientRect().right,
                 width: innerWidth, overlaps };
    }""")
    assert fit["overflow"] <= 0 and fit["signoutRight"] <= fit["width"] and not fit["overlaps"], fit
