import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hypothesis import settings  # noqa: E402

# CI gates a landing: there the property tests draw the same examples every run
# (HYPOTHESIS_PROFILE=ci in .ci/run); elsewhere they explore new ones each run.
settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# ---------------------------------------------------------------------- a real browser
# Headless Chromium from the system (/usr/bin/chromium, or NERTZ_CHROMIUM) driven by
# Playwright, for the replay viewer (tests/replay) and the play page (tests/human). Skipped
# when either is missing, except under NERTZ_REQUIRE_CLIENTS=1 (CI), where that fails.
import pytest  # noqa: E402

CHROMIUM = os.environ.get("NERTZ_CHROMIUM", "/usr/bin/chromium")


def _no_browser(why: str):
    if os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")                 # per module: no event loop held across files
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        _no_browser(f"playwright is not installed ({err}): pip install playwright")
    if not os.access(CHROMIUM, os.X_OK):
        _no_browser(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set "
                    "NERTZ_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page; the test fails if any script on it threw."""
    pg = browser.new_page(viewport={"width": 1100, "height": 900})
    errors = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    pg.set_default_timeout(10_000)
    yield pg
    pg.close()
    assert not errors, errors
