#!/usr/bin/python3
"""Two details of Lockstep's web cue page in headless Chromium (Debian's chromium +
chromium-driver, python3-selenium): a follow-on cue's state — the state cell of CUE (a cue another
cue's GO places), GO clicked, and the cell again once it changed — and a stray click on LAYER's
gain fader track, far from its knob, which moves it one step only. Prints one JSON object:
{"before": text, "after": text, "goReply": the GO's reply, "faderBefore", "faderAfter": values,
"gainReply": the fader's reply}.

Usage: page_details.py URL CUE LAYER
Exits 77 with "SKIP: reason" when the browser cannot start, 1 when a wait runs out (10 s each).
"""
import json
import os
import sys

url, cue, layer = sys.argv[1], sys.argv[2], sys.argv[3]
sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
from selenium.webdriver.common.action_chains import ActionChains
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

    # A click on the fader's track near its low end (-60 dB), the knob at 0 dB.
    fader = wait("the fader", lambda: driver.find_element(By.CSS_SELECTOR, '.fader input[data-layer="%s"]' % layer))
    result["faderBefore"] = fader.get_attribute("value")
    width = fader.size["width"]
    ActionChains(driver).move_to_element_with_offset(fader, -width // 2 + 3, 0).click().perform()
    reply = wait("the fader's reply", lambda: (lambda r: r if r and r.get("address") == "gain" else None)(
        driver.execute_script("return window.lockstep.lastReply")))
    result["faderAfter"] = fader.get_attribute("value")
    result["gainReply"] = reply
    print(json.dumps(result))
finally:
    driver.quit()
