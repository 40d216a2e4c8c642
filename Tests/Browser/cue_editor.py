#!/usr/bin/python3
"""Edits a cue in Lockstep's web cue page in headless Chromium, as an operator would: clicks a
cue, changes its pre_wait and gain in the editor, applies (one edit), undoes, redoes and saves; then, on
the page without the edit token, tries an edit and reads the refusal.

With FILE (the session file), the file is changed on disk before the save: the page refuses it,
offering "save anyway", which the script clicks.

Usage: cue_editor.py EDIT_URL PLAIN_URL CUE SCREENSHOT_DIR [FILE]
Prints one JSON object (what the page showed) on standard output. Exits 77 with "SKIP: reason"
when the browser cannot start, 1 when a wait runs out. Every wait is bounded (10 s).
"""
import atexit
import json
import os
import sys

edit_url, plain_url, cue, shots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
changed_file = sys.argv[5] if len(sys.argv) > 5 else None
sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
from selenium.webdriver.common.by import By
atexit.register(driver.quit)
result = {}


wait = headless.waiter(result)


def field(name):
    return driver.find_element(By.CSS_SELECTOR, '#edit-fields [name="%s"]' % name)


def last_reply(address):
    reply = driver.execute_script("return window.lockstep.lastReply")
    return reply if reply and reply.get("address") == address else None


def open_editor():
    row = wait("the cue's row", lambda: driver.find_element(By.CSS_SELECTOR, 'tr[data-cue="%s"]' % cue))
    row.click()
    wait("the editor", lambda: driver.find_element(By.ID, "editor").is_displayed())


def set_fields(values):
    for name, value in values.items():
        box = field(name)
        box.clear()
        box.send_keys(value)
    driver.find_element(By.ID, "edit-apply").click()


driver.get(edit_url)
wait("the page to connect", lambda: driver.find_element(By.ID, "connection").text == "connected")
open_editor()
result["fields"] = [e.get_attribute("name") for e in driver.find_elements(By.CSS_SELECTOR, "#edit-fields input, #edit-fields select")]
result["before"] = {"pre_wait": field("pre_wait").get_attribute("value"), "gain": field("gain").get_attribute("value")}
set_fields({"pre_wait": "0.5", "gain": "-6"})
wait("the edits to show", lambda: field("pre_wait").get_attribute("data-original") == "0.5"
     and field("gain").get_attribute("data-original") == "-6")
driver.save_screenshot(os.path.join(shots, "cue-editor.png"))
result["after"] = {"pre_wait": field("pre_wait").get_attribute("value"), "gain": field("gain").get_attribute("value")}
set_fields({"pre_wait": "soon"})
result["error"] = wait("the error", lambda: driver.find_element(By.ID, "edit-error").text)
driver.find_element(By.ID, "undo").click()
wait("the undo", lambda: field("gain").get_attribute("data-original") == "" and field("pre_wait").get_attribute("data-original") == "")
result["afterUndo"] = {"pre_wait": field("pre_wait").get_attribute("value"), "gain": field("gain").get_attribute("value")}
driver.find_element(By.ID, "redo").click()
wait("the redo", lambda: field("gain").get_attribute("data-original") == "-6")
if changed_file:
    with open(changed_file, "a") as file:
        file.write("# changed on disk while the show ran\n")
    driver.find_element(By.ID, "save").click()
    result["saveRefused"] = wait("the save's refusal", lambda: driver.find_element(By.ID, "edit-error").text)
    wait("the choice", lambda: driver.find_element(By.ID, "save-force")).click()
    result["save"] = wait("the forced save's answer", lambda: (last_reply("save") or {}).get("status") == "ok" and last_reply("save"))
else:
    driver.find_element(By.ID, "save").click()
    result["save"] = wait("the save's answer", lambda: last_reply("save"))

driver.get(plain_url)
wait("the plain page to connect", lambda: driver.find_element(By.ID, "connection").text == "connected")
open_editor()
set_fields({"pre_wait": "1"})
result["refused"] = wait("the refusal", lambda: driver.find_element(By.ID, "edit-error").text)
print(json.dumps(result))
