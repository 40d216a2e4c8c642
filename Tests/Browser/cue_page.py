#!/usr/bin/python3
"""Drives Lockstep's web cue page in headless Chromium (Debian's chromium + chromium-driver,
python3-selenium), as an operator would: loads the page, reads the cue list and the meters
(bars and peak/RMS numbers), selects next and previous, clicks GO, moves a gain fader with the
keyboard, pauses and resumes, fires the next cue with the space bar, panics, fires the last cue
and stops it, saving screenshots on the way.

Usage: cue_page.py URL SCREENSHOT_DIR LAYER STEPS
Prints one JSON object (what the page showed) on standard output. Exits 77 with "SKIP: reason"
when the browser cannot start, 1 when the page does not do what it should. Every wait is
bounded (10 s at most; the whole run takes about 15 s).
"""
import atexit
import json
import os
import sys
import time

url, shots, layer, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

started = time.time()
# What the layer's meter showed, sampled while the script waits: [seconds, peak dB, RMS dB,
# the peak number shown, the RMS number shown] ("" for silence).
meter_samples = []


def sample_meter():
    meter = driver.find_element(By.CSS_SELECTOR, '.meter[data-name="%s"]' % layer)
    meter_samples.append([round(time.time() - started, 3), meter.get_attribute("data-peak-db"),
                          meter.get_attribute("data-rms-db"), meter.find_element(By.CSS_SELECTOR, ".peak-db").text,
                          meter.find_element(By.CSS_SELECTOR, ".rms-db").text])


def wait(condition, timeout=10.0, what="the page"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception:
            pass
        try:
            sample_meter()
        except Exception:
            pass
        time.sleep(0.02)
    raise SystemExit("FAIL: timed out waiting for %s" % what)


def hold(seconds):
    """Waits `seconds`, sampling the meter all the while."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            sample_meter()
        except Exception:
            pass
        time.sleep(0.02)


def reply_to(address, cue=None):
    """Waits for the reply to `address` (and `cue`) under the buttons; its JSON."""
    wait(lambda: driver.execute_script("const r = window.lockstep.lastReply; return r && r.address === arguments[0]"
                                       " && (arguments[1] === null || (r.data && r.data.cue === arguments[1]))", address, cue),
         what="the reply to %s" % address)
    return driver.execute_script("return window.lockstep.lastReply")


def meter_text(name):
    meter = driver.find_element(By.CSS_SELECTOR, '.meter[data-name="%s"]' % name)
    return {"peak": meter.find_element(By.CSS_SELECTOR, ".peak-db").text, "rms": meter.find_element(By.CSS_SELECTOR, ".rms-db").text,
            "hold": meter.find_element(By.CSS_SELECTOR, ".hold").text, "peakDB": meter.get_attribute("data-peak-db"),
            "rmsDB": meter.get_attribute("data-rms-db")}


def selected():
    return driver.find_element(By.ID, "playhead").text


result = {}
try:
    driver.get(url)
    wait(lambda: driver.find_element(By.ID, "connection").text == "connected", what="the WebSocket")
    rows = wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#cue-rows tr"), what="the cue list")
    wait(lambda: driver.find_element(By.CSS_SELECTOR, "#timeline svg"), what="the timeline picture")
    wait(lambda: driver.execute_script("return window.lockstep.metersReceived") > 5, what="meters")
    wait(lambda: selected() != "—", what="the selected cue")
    result["cues"] = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    driver.save_screenshot(os.path.join(shots, "1-loaded.png"))

    # The meters: how many a second, and what the layer's meter showed (numbers and data).
    count0, time0 = driver.execute_script("return window.lockstep.metersReceived"), time.time()
    hold(2)
    result["metersPerSecond"] = (driver.execute_script("return window.lockstep.metersReceived") - count0) / (time.time() - time0)
    result["meterBefore"] = meter_text(layer)
    result["masterBefore"] = meter_text("master")
    clock0 = driver.find_element(By.ID, "now").text

    # Select next and previous: the selected cue's label follows.
    result["selected"] = [selected()]
    driver.find_element(By.ID, "next").click()
    reply_to("next")
    wait(lambda: selected() != result["selected"][0], what="the selection to move on")
    result["selected"].append(selected())
    driver.find_element(By.ID, "previous").click()
    reply_to("previous")
    wait(lambda: selected() != result["selected"][1], what="the selection to move back")
    result["selected"].append(selected())

    # GO: a real click on the button.
    driver.find_element(By.ID, "go").click()
    go = reply_to("go")
    box = driver.find_element(By.ID, "last-reply")
    result["goReply"] = box.text
    result["goCue"] = box.get_attribute("data-cue")
    result["goSampleTime"] = int(box.get_attribute("data-sample-time"))
    row = driver.find_element(By.CSS_SELECTOR, 'tr[data-cue="%s"]' % result["goCue"])
    wait(lambda: row.get_attribute("data-started-sample-time"), what="the cue's start in its row")
    result["rowStartedSampleTime"] = int(row.get_attribute("data-started-sample-time"))
    result["rowAfterGo"] = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    wait(lambda: selected() == go["data"]["playhead"], what="the selection after GO")
    result["selectedAfterGo"] = selected()
    result["clockMoved"] = driver.find_element(By.ID, "now").text != clock0
    driver.save_screenshot(os.path.join(shots, "2-after-go.png"))

    # The fader: arrow keys on the focused range input, as an operator would nudge it.
    fader = driver.find_element(By.CSS_SELECTOR, 'input[data-layer="%s"]' % layer)
    driver.execute_script("arguments[0].focus()", fader)
    for _ in range(steps):
        fader.send_keys(Keys.ARROW_DOWN)
        hold(0.12)
    target = -float(steps)
    wait(lambda: driver.execute_script("const r = window.lockstep.lastReply; return r.address === 'gain' && r.data.gainDB")
         == target, what="the reply to the last fader move")
    result["faderValue"] = float(fader.get_attribute("value"))
    result["gainReply"] = driver.execute_script("return window.lockstep.lastReply")
    hold(0.6)
    result["meterAfterFader"] = meter_text(layer)
    result["timelineCues"] = [g.get_attribute("data-cue") for g in driver.find_elements(By.CSS_SELECTOR, "#timeline g.cue")]
    result["playheadX"] = driver.find_element(By.CSS_SELECTOR, "#timeline #playhead").get_attribute("x1")
    hold(0.2)
    result["playheadX2"] = driver.find_element(By.CSS_SELECTOR, "#timeline #playhead").get_attribute("x1")
    driver.save_screenshot(os.path.join(shots, "3-after-fader.png"))
    driver.execute_script("arguments[0].blur()", fader)

    # Pause, hold it, resume: the state, the button's label and the meters follow.
    pause_button = driver.find_element(By.ID, "pause")
    result["pauseLabel"] = [pause_button.text]
    pause_button.click()
    result["pauseReply"] = reply_to("pause")
    wait(lambda: driver.execute_script("return window.lockstep.lastStatus.state") == "paused", what="the paused state")
    wait(lambda: pause_button.text.lower() == "resume", what="the resume button")
    result["pauseLabel"].append(pause_button.text)
    wait(lambda: meter_text(layer)["peakDB"] == "", what="silence on the paused meter")
    result["meterPaused"] = meter_text(layer)
    result["stateShownPaused"] = driver.find_element(By.ID, "state").text
    clock_paused = driver.find_element(By.ID, "now").text
    hold(0.7)
    result["clockStoodStill"] = driver.find_element(By.ID, "now").text == clock_paused
    driver.save_screenshot(os.path.join(shots, "4-paused.png"))
    pause_button.click()
    result["resumeReply"] = reply_to("resume")
    wait(lambda: pause_button.text.lower() == "pause", what="the pause button again")
    result["pauseLabel"].append(pause_button.text)
    wait(lambda: meter_text(layer)["peakDB"] not in ("", None), what="sound on the meter after resume")
    hold(0.3)
    result["meterResumed"] = meter_text(layer)

    # The space bar is GO too (focus on the page, not in a field).
    before_space = selected()
    ActionChains(driver).send_keys(Keys.SPACE).perform()
    result["spaceReply"] = reply_to("go", before_space)
    wait(lambda: selected() != before_space, what="the selection after the space bar")
    result["spaceCue"] = before_space
    result["selectedAfterSpace"] = selected()
    hold(0.3)

    # PANIC: every cue fades out over 1 s, then stops.
    driver.find_element(By.ID, "panic").click()
    result["panicReply"] = reply_to("panic")
    wait(lambda: meter_text(layer)["peakDB"] == "", timeout=5, what="silence after the panic fade")
    result["meterAfterPanic"] = meter_text(layer)
    result["rowsAfterPanic"] = {row.get_attribute("data-cue"): row.get_attribute("data-state")
                                for row in driver.find_elements(By.CSS_SELECTOR, "#cue-rows tr")}
    driver.save_screenshot(os.path.join(shots, "5-after-panic.png"))

    # GO on the last cue, then stop it.
    last = selected()
    driver.find_element(By.ID, "go").click()
    result["lastGoReply"] = reply_to("go", last)
    wait(lambda: driver.find_element(By.CSS_SELECTOR, '.meter[data-name="fx"]').get_attribute("data-rms-db") not in ("", None),
         what="the last cue on its layer's meter")
    hold(0.4)
    result["fxMeterPlaying"] = meter_text("fx")
    result["consoleErrors"] = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    driver.find_element(By.ID, "stop").click()
    result["stopReply"] = reply_to("stop")
    driver.save_screenshot(os.path.join(shots, "6-stopped.png"))
    result["meterSamples"] = meter_samples
    result["seconds"] = round(time.time() - started, 1)
finally:
    driver.quit()
print(json.dumps(result))
