#!/usr/bin/python3
"""Drives Lockstep's web cue page in headless Chromium (Debian's chromium + chromium-driver,
python3-selenium), as an operator would: loads the page, reads the cue list, clicks GO, moves a
gain fader with the keyboard, watches the meters, and saves screenshots.

Usage: cue_page.py URL SCREENSHOT_DIR LAYER STEPS
Prints one JSON object (what the page showed) on standard output. Exits 77 with "SKIP: reason"
when the browser cannot start, 1 when the page does not do what it should.
"""
import json
import os
import sys
import time

url, shots, layer, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except Exception as error:  # the package is missing or broken
    print("SKIP: python3-selenium cannot be imported: %s" % error)
    sys.exit(77)

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", "--force-device-scale-factor=1"):
    options.add_argument(argument)
try:
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
except Exception as error:
    print("SKIP: headless Chromium did not start: %s" % str(error).splitlines()[0])
    sys.exit(77)


def wait(condition, timeout=10.0, what="the page"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception:
            pass
        time.sleep(0.02)
    raise SystemExit("FAIL: timed out waiting for %s" % what)


result = {}
try:
    driver.get(url)
    wait(lambda: driver.find_element(By.ID, "connection").text == "connected", what="the WebSocket")
    rows = wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#cue-rows tr"), what="the cue list")
    wait(lambda: driver.find_element(By.CSS_SELECTOR, "#timeline svg"), what="the timeline picture")
    wait(lambda: driver.execute_script("return window.lockstep.metersReceived") > 5, what="meters")
    result["cues"] = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    result["selectedBefore"] = driver.find_element(By.ID, "playhead").text
    driver.save_screenshot(os.path.join(shots, "1-loaded.png"))

    # The meters: how many a second, and what the layer's meter showed.
    count0, time0 = driver.execute_script("return window.lockstep.metersReceived"), time.time()
    peaks = set()
    while time.time() - time0 < 2:
        peaks.add(driver.find_element(By.CSS_SELECTOR, '.meter[data-name="%s"]' % layer).get_attribute("data-peak-db"))
        time.sleep(0.01)
    result["metersPerSecond"] = (driver.execute_script("return window.lockstep.metersReceived") - count0) / (time.time() - time0)
    result["peakBefore"] = float(driver.find_element(By.CSS_SELECTOR, '.meter[data-name="%s"]' % layer).get_attribute("data-peak-db"))
    clock0 = driver.find_element(By.ID, "now").text

    # GO: a real click on the button.
    driver.find_element(By.ID, "go").click()
    box = driver.find_element(By.ID, "last-reply")
    wait(lambda: box.get_attribute("data-address") == "go", what="the reply to GO")
    result["goReply"] = box.text
    result["goCue"] = box.get_attribute("data-cue")
    result["goSampleTime"] = int(box.get_attribute("data-sample-time"))
    row = driver.find_element(By.CSS_SELECTOR, 'tr[data-cue="%s"]' % result["goCue"])
    wait(lambda: row.get_attribute("data-started-sample-time"), what="the cue's start in its row")
    result["rowStartedSampleTime"] = int(row.get_attribute("data-started-sample-time"))
    result["rowAfterGo"] = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    result["selectedAfter"] = driver.find_element(By.ID, "playhead").text
    result["clockMoved"] = driver.find_element(By.ID, "now").text != clock0
    driver.save_screenshot(os.path.join(shots, "2-after-go.png"))

    # The fader: arrow keys on the focused range input, as an operator would nudge it.
    fader = driver.find_element(By.CSS_SELECTOR, 'input[data-layer="%s"]' % layer)
    driver.execute_script("arguments[0].focus()", fader)
    for _ in range(steps):
        fader.send_keys(Keys.ARROW_DOWN)
        time.sleep(0.12)
    target = -float(steps)
    wait(lambda: box.get_attribute("data-address") == "gain" and float(driver.execute_script(
        "return window.lockstep.lastReply.data.gainDB")) == target, what="the reply to the last fader move")
    result["faderValue"] = float(fader.get_attribute("value"))
    result["gainReply"] = driver.execute_script("return window.lockstep.lastReply")
    time.sleep(0.6)
    result["peakAfter"] = float(driver.find_element(By.CSS_SELECTOR, '.meter[data-name="%s"]' % layer).get_attribute("data-peak-db"))
    result["distinctPeaks"] = len(peaks)
    result["timelineCues"] = [g.get_attribute("data-cue") for g in driver.find_elements(By.CSS_SELECTOR, "#timeline g.cue")]
    result["playheadX"] = driver.find_element(By.CSS_SELECTOR, "#timeline #playhead").get_attribute("x1")
    time.sleep(0.2)
    result["playheadX2"] = driver.find_element(By.CSS_SELECTOR, "#timeline #playhead").get_attribute("x1")
    driver.save_screenshot(os.path.join(shots, "3-after-fader.png"))
    result["consoleErrors"] = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
finally:
    driver.quit()
print(json.dumps(result))
