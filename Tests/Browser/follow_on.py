#!/usr/bin/python3
"""Reads a follow-on cue's state on Lockstep's web cue page in headless Chromium (Debian's chromium
+ chromium-driver, python3-selenium): loads the page, reads the state cell of CUE (a cue another
cue's GO places), clicks GO, and reads it again once it changed. Prints one JSON object:
{"before": text, "after": text, "goReply": the GO's reply}.

Usage: follow_on.py URL CUE
Exits 77 with "SKIP: reason" when the browser cannot start, 1 when a wait runs out (10 s each).
"""
import json
import os
import sys

url, cue = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
from selenium.webdriver.common.by import By
result = {}
try:
    wait = headless.waiter(result)
    driver.get(url)
    wait("the page to connect", lambda: driver.find_element(By.ID, "connection").text == "connected")

    def state():
        return driver.find_element(By.CSS_SELECTOR, 'tr[data-cue="%s"] td.state' % cue).text

    result["before"] = wait("the cue's state", state)
    driver.find_element(By.ID, "go").click()
    result["after"] = wait("the cue's state to change", lambda: state() != result["before"] and state())
    result["goReply"] = driver.execute_script("return window.lockstep.lastReply")
    print(json.dumps(result))
finally:
    driver.quit()
