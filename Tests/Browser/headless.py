"""Headless Chromium for the page tests: a temporary folder of its own (Chromium leaves an
org.chromium.Chromium.* folder in TMPDIR), Debian's chromium and chromedriver through Selenium.
`start()` returns the driver, or exits 77 with "SKIP: reason" when the browser cannot run."""
import atexit
import json
import os
import shutil
import sys
import tempfile
import time


def start():
    browser_temp = tempfile.mkdtemp(prefix="lockstep-chromium-")
    atexit.register(shutil.rmtree, browser_temp, True)
    os.environ["TMPDIR"] = browser_temp
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except Exception as error:  # the package is missing or broken
        print("SKIP: python3-selenium cannot be imported: %s" % error)
        sys.exit(77)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    try:
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:
        print("SKIP: headless Chromium did not start: %s" % str(error).splitlines()[0])
        sys.exit(77)


def waiter(result, on_timeout=lambda: None):
    """A `wait(what, condition, timeout=10)` returning condition()'s first true value; when the
    time runs out it notes what in `result["failed"]` (after `on_timeout(result)`), prints
    `result` as JSON and exits 1."""
    def wait(what, condition, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = condition()
                if value:
                    return value
            except Exception:
                pass
            time.sleep(0.05)
        result["failed"] = "timed out waiting for " + what
        on_timeout(result)
        print(json.dumps(result))
        sys.exit(1)
    return wait
