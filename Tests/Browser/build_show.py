#!/usr/bin/python3
"""Builds a 10-cue show from an empty session in Lockstep's web cue page, in headless Chromium,
as an operator would: adds cues with the "add cue" button, sets a bed looping from the top, a
pre-wait, a fade (type, target, level, duration), a wait, an auto-continue, a gain, duplicates a
cue and moves the copy up, deletes a cue and undoes and redoes it, puts a cue in a new group and
moves another into it, sets the layer's gain, routes it to a port the page offers and back, learns a MIDI trigger (the
test's JACK MIDI client sends the note), then saves.

Usage: build_show.py EDIT_URL SCREENSHOT_DIR
Prints one JSON object (what the page showed, and its cue list at the end) on standard output.
Exits 77 with "SKIP: reason" when the browser cannot start, 1 when a wait runs out. Every wait is
bounded (10 s).
"""
import atexit
import json
import os
import sys

edit_url, shots = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
atexit.register(driver.quit)
result = {"errors": []}


def note_error(result):
    result["editError"] = driver.find_element(By.ID, "edit-error").text


wait = headless.waiter(result, note_error)


def rows():
    return [r.get_attribute("data-cue") for r in driver.find_elements(By.CSS_SELECTOR, "#cue-rows tr")]


def field(name):
    return driver.find_element(By.CSS_SELECTOR, '#edit-fields [name="%s"]' % name)


def open_cue(name):
    # (The rows are built again as the list changes: find the row anew until a click lands.)
    wait("a click on the row of " + name,
         lambda: driver.find_element(By.CSS_SELECTOR, 'tr[data-cue="%s"]' % name).click() or True)
    wait("the editor of " + name, lambda: driver.find_element(By.ID, "edit-cue").text == name)


def edits_done():
    return driver.execute_script("return document.querySelectorAll('#edit-fields .changed').length") == 0


def apply(name, values, then):
    """Opens cue `name`, sets `values` (a key not shown is added with "add a key"), applies, and
    waits until `then()` holds."""
    open_cue(name)
    for key, value in values.items():
        if not driver.find_elements(By.CSS_SELECTOR, '#edit-fields [name="%s"]' % key):
            Select(driver.find_element(By.ID, "edit-more")).select_by_value(key)
        box = field(key)
        if box.tag_name == "select":
            Select(box).select_by_value(value)
        else:
            box.clear()
            box.send_keys(value)
    driver.find_element(By.ID, "edit-apply").click()
    wait("the edit of " + name, then)
    error = driver.find_element(By.ID, "edit-error").text
    if error:
        result["errors"].append(error)


def cue_info():
    return driver.execute_script(
        "return fetch('/api/cues' + location.search).then(r => r.json()).then(l => l.cues)")


def value_of(name, key):
    cue = next((c for c in cue_info() if c["name"] == name), None)
    return cue and cue["values"].get(key)


def click(id):
    button = driver.find_element(By.ID, id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()


driver.get(edit_url)
wait("the page to connect", lambda: driver.find_element(By.ID, "connection").text == "connected")
wait("the editor", lambda: driver.find_element(By.ID, "editor").is_displayed())
result["rowsAtStart"] = len(rows())
for count in range(1, 10):
    click("add-cue")
    wait("cue %d to be added" % count, lambda: len(rows()) == count)
apply("cue 1", {"at": "0", "loop": "forever", "gain": "-6"}, lambda: value_of("cue 1", "loop") == "forever")
apply("cue 2", {"file": "b.wav", "pre_wait": "0.5"}, lambda: value_of("cue 2", "file") == "b.wav")
apply("cue 3", {"type": "fade", "file": "", "layer": "", "target": "cue 1", "level": "-12", "duration": "2"},
      lambda: value_of("cue 3", "type") == "fade")
apply("cue 5", {"at": "", "gain": "-3"}, lambda: value_of("cue 5", "at") is None)
apply("cue 4", {"type": "wait", "file": "", "layer": "", "duration": "1.5", "continue": "auto-continue"},
      lambda: value_of("cue 4", "type") == "wait")
apply("cue 6", {"name": "stinger", "file": "b.wav"}, lambda: "stinger" in rows())
open_cue("cue 2")
click("duplicate-cue")
wait("the copy", lambda: "cue 2 copy" in rows())
open_cue("cue 2 copy")
click("move-up")
wait("the copy to move up", lambda: rows().index("cue 2 copy") == 1)
open_cue("cue 9")
click("delete-cue")
wait("the delete", lambda: "cue 9" not in rows())
click("undo")
wait("the undo", lambda: "cue 9" in rows())
click("redo")
wait("the redo", lambda: "cue 9" not in rows())
click("undo")
wait("the second undo", lambda: "cue 9" in rows())
# A group: cue 7 put in a new one, then cue 8 moved into it (its "at: manual" removed: it starts
# with the group).
open_cue("cue 7")
click("group-cue")
wait("the group", lambda: "cue 7 group" in rows())
apply("cue 8", {"at": "", "group": "cue 7 group"},
      lambda: next((c for c in cue_info() if c["name"] == "cue 8"), {}).get("group") == "cue 7 group")
# The layer: its gain.
Select(driver.find_element(By.ID, "layer-name")).select_by_value("fx")
gain = driver.find_element(By.CSS_SELECTOR, '#layer-fields [name="gain"]')
gain.clear()
gain.send_keys("-3")
click("layer-apply")
wait("the layer's gain", lambda: driver.execute_script(
    "return fetch('/api/cues' + location.search).then(r => r.json()).then(l => l.layerValues.fx.gain)") == "-3")
# The layer's ports: one the page offers (the JACK graph's audio inputs), then back into the mix.
result["ports"] = wait("the JACK ports offered", lambda: driver.execute_script(
    "return [...document.querySelectorAll('#jack-ports option')].map(o => o.value)") or None)
ports = driver.find_element(By.CSS_SELECTOR, '#layer-fields [name="ports"]')
ports.clear()
ports.send_keys(result["ports"][0])
click("layer-apply")
result["routed"] = wait("the layer's ports", lambda: driver.execute_script(
    "return fetch('/api/cues' + location.search).then(r => r.json()).then(l => l.layerValues.fx.ports)"))
result["routedReply"] = driver.execute_script("return window.lockstep.lastReply")
ports = driver.find_element(By.CSS_SELECTOR, '#layer-fields [name="ports"]')
ports.clear()
click("layer-apply")
wait("the layer back in the mix", lambda: driver.execute_script(
    "return fetch('/api/cues' + location.search).then(r => r.json()).then(l => !l.layerValues.fx.ports)"))
# MIDI learn: the test sends note 60 on channel 1 every 0.3 s from a JACK MIDI client.
open_cue("cue 2")
click("learn")
result["learned"] = wait("the learned trigger", lambda: driver.find_element(By.ID, "edit-triggers").text)
driver.save_screenshot(os.path.join(shots, "cue-builder.png"))
click("save")
result["save"] = wait("the save's answer", lambda: (lambda r: r if r and r.get("address") == "save" else None)(
    driver.execute_script("return window.lockstep.lastReply")))
result["rows"] = rows()
result["cues"] = cue_info()
print(json.dumps(result))
