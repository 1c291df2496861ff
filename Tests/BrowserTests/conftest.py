"""Fixtures: one daemon with the seeded story for the whole run, system Chromium (no
browser download), and a directory for screenshots and downloads."""

import os
import pathlib
import shutil

import pytest
from playwright.sync_api import sync_playwright

from daemon import Daemon
from seed import seed

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def out_dir():
    path = pathlib.Path(os.environ.get("CONSOLE_TEST_OUT", ROOT / ".build-browser-tests"))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


@pytest.fixture(scope="session")
def daemon():
    d = Daemon(os.environ.get("MAMTELEMETRYD", str(ROOT / ".build/debug/mamtelemetryd")))
    d.start()
    yield d
    d.stop()
    shutil.rmtree(d.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def story(daemon):
    facts = seed(daemon)
    facts["support"] = daemon.token("support-desk", ["read", "bundle"])
    facts["reader"] = daemon.token("read-only", ["read"])
    facts["investigator"] = daemon.token("investigator", ["read", "pii"])
    return facts


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser, daemon):
    # A zone other than UTC, so local time and the UTC shown on hover differ.
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, timezone_id="Europe/Berlin", locale="en-GB",
                                  accept_downloads=True)
    p = context.new_page()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    # The browser logs every 4xx answer as an error; a test that provokes one on purpose
    # (an ambiguous device id is a 400) adds its status to `p.expected_statuses`.
    p.expected_statuses = {404}
    p.on("console", lambda m: errors.append(m.text)
         if m.type == "error" and not any(f"status of {s}" in m.text for s in p.expected_statuses) else None)
    yield p
    context.close()
    assert not errors, f"the console logged errors: {errors}"
