#!/usr/bin/python3
"""Watches the web cue page's show-link line in headless Chromium (Debian's chromium +
chromium-driver, python3-selenium): loads the page, says "loaded" on standard error, records every
text the line shows (a MutationObserver, so a text replaced within milliseconds is seen too) until
one contains TEXT, and prints them as JSON: {"texts": [...], "warning": bool (the line marked as a
warning when TEXT showed)}.

Usage: link_line.py URL TEXT TIMEOUT
Exits 77 with "SKIP: reason" when the browser cannot start, 1 when TEXT never shows.
"""
import json
import os
import sys
import time

url, text, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])

sys.dont_write_bytecode = True     # (no __pycache__ left in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402

driver = headless.start()
result = {"texts": []}
try:
    driver.get(url)
    wait = headless.waiter(result)
    wait("the page's link line", lambda: driver.execute_script("return document.getElementById('link-state') !== null"))
    driver.execute_script("""
        window.linkTexts = [];
        const line = document.getElementById('link-state');
        new MutationObserver(() => window.linkTexts.push([line.textContent,
            document.getElementById('link').classList.contains('warning')]))
            .observe(line, {childList: true, characterData: true, subtree: true});
    """)
    # (The page is live: its WebSocket is open once the cue list shows.)
    wait("the cue list", lambda: driver.execute_script("return document.querySelectorAll('tr[data-cue]').length > 0"))
    print("loaded", file=sys.stderr, flush=True)
    seen = wait("'%s' on the link line" % text,
                lambda: [entry for entry in driver.execute_script("return window.linkTexts") if text in entry[0]], timeout)
    result["texts"] = [entry[0] for entry in driver.execute_script("return window.linkTexts")]
    result["warning"] = seen[0][1]
    print(json.dumps(result))
finally:
    driver.quit()
