// The Lockstep cue page: one WebSocket to the server that plays the show. Messages are the JSON
// of --json and the OSC replies: a reply {"address","status","data"}, an update {"kind",…},
// meters {"event":"meters",…} and discontinuities {"event":"discontinuities",…}. Commands go
// back as {"command":"go"} and the like.
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  const token = params.get("token"), editToken = params.get("edit");
  const query = [token ? "token=" + encodeURIComponent(token) : null, editToken ? "edit=" + encodeURIComponent(editToken) : null]
    .filter(Boolean).reduce((q, part) => q + (q ? "&" : "?") + part, "");
  const $ = (id) => document.getElementById(id);
  const page = { metersReceived: 0, statusReceived: 0, lastMeters: null, lastStatus: null, lastReply: null, updates: [] };
  window.lockstep = page;
  let socket = null;
  let cueInfo = null;          // from /api/cues: lengths and numbers
  let depths = [];             // per cue: how many groups it is in
  let rowsKey = "";            // the cue list the rows were built for
  let pictureKey = null;       // the timeline state the picture was fetched for
  let picture = null;          // the SVG element and its scale
  let rate = 48000;
  const started = {};          // cue → device sample its start was reported on

  function clock(seconds) {
    if (seconds == null || !isFinite(seconds)) return "—";
    const negative = seconds < 0; seconds = Math.abs(seconds);
    const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds - 60 * Math.floor(seconds / 60);
    const text = (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + s.toFixed(3).padStart(6, "0");
    return (negative ? "-" : "") + text;
  }
  function db(value) { return value == null || value === "-inf" ? "-∞" : Number(value).toFixed(1); }

  function send(command) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(command));
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws" + query);
    socket.onopen = () => { $("connection").textContent = "connected"; $("connection").className = "online"; };
    socket.onclose = () => {
      $("connection").textContent = "offline"; $("connection").className = "offline";
      setTimeout(connect, 1000);
    };
    socket.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      if (message.event === "meters") meters(message);
      else if (message.event === "discontinuities") discontinuities(message);
      else if (message.kind) update(message);
      else if (message.address !== undefined && message.status) reply(message);
    };
  }

  function reply(message) {
    if (message.address === "status" && message.status === "ok") { status(message.data); return; }
    // (A value the server cannot read is refused before it is a command: its reply names none.)
    if (editsPending > 0 && (editVerbs.includes(message.address) || message.address === "")) {
      editsPending--;
      edited(message);
    }
    page.lastReply = message;
    const box = $("last-reply");
    box.className = "reply" + (message.status === "error" ? " error" : "");
    box.dataset.address = message.address;
    box.dataset.status = message.status;
    if (message.status === "error") { box.textContent = (message.address ? message.address + ": " : "") + message.data; return; }
    const data = message.data || {};
    box.dataset.sampleTime = data.sampleTime != null ? data.sampleTime : "";
    box.dataset.cue = data.cue || "";
    let text = message.address;
    if (data.cue) text += " " + data.cue;
    if (data.start != null) text += " at " + clock(data.start / rate) + " (session sample " + data.start + ")";
    else if (data.position != null) text += " at " + clock(data.position / rate);
    if (data.sampleTime != null) text += ", device sample " + data.sampleTime;
    box.textContent = text;
  }

  function update(message) {
    page.updates.push(message);
    if (page.updates.length > 200) page.updates.shift();
    if (message.kind === "cue/started" && message.cue) {
      started[message.cue] = message.sampleTime;
      const row = document.querySelector('tr[data-cue="' + CSS.escape(message.cue) + '"]');
      if (row) row.dataset.startedSampleTime = message.sampleTime;
    }
    if (message.kind === "cue/edited") loadCues();
    if (message.kind === "chase") {
      // session run --chase: lock, loss, jump, relocate or stop, with the label read.
      $("chase").hidden = false;
      $("chase-state").textContent = message.state + (message.timecode ? " at " + message.timecode : "") +
        ", session sample " + message.position + " on device sample " + message.sampleTime;
    }
    if (message.kind === "link") {
      // session run --main / --backup-of: a backup joined or left; the backup lost its main
      // (it plays on and takes commands).
      $("link").hidden = false;
      $("link-state").textContent = message.state === "lost"
        ? "the main at " + message.peer + " is lost: this backup plays on and takes commands"
        : "a backup at " + message.peer + " " + message.state;
    }
    if (message.kind === "divergence") {
      // session run --main / --backup-of: the two outputs' hashes differ (a block, then the
      // first differing sample once both sides' samples are compared), or agree again.
      $("link").hidden = false;
      const outputs = message.outputs ? " on output " + message.outputs.join(", ") : "";
      $("link-state").textContent = message.state === "agrees"
        ? "the outputs of main and backup (" + message.peer + ") agree again from session sample " + message.position
        : message.state === "diverged"
          ? "DIVERGED from " + message.peer + " at session sample " + message.position + outputs
          : "differs from " + message.peer + " in the block at session sample " + message.position + outputs;
      $("link").classList.toggle("warning", message.state !== "agrees");
    }
    if (message.kind === "discontinuity") {
      const item = document.createElement("li");
      item.textContent = message.discontinuity.kind + " at device sample " + message.sampleTime;
      $("discontinuity-list").prepend(item);
    }
    if (message.kind === "late") {
      // A GO, seek or resume that came too late for its sample: its first frames were skipped.
      const item = document.createElement("li");
      item.textContent = "late by " + message.frames + " frames: meant for session sample " + message.position +
        ", began at device sample " + message.sampleTime;
      $("discontinuity-list").prepend(item);
    }
  }

  function status(data) {
    page.statusReceived += 1;
    page.lastStatus = data;
    rate = data.sampleRate || rate;
    $("state").textContent = data.state;
    $("playhead").textContent = data.playhead || "—";
    $("pause").textContent = data.state === "paused" ? "resume" : "pause";
    $("discontinuity-count").textContent = data.discontinuities;
    if (data.next) {
      $("next-name").textContent = data.next.name;
      if (data.next.manual) $("next-in").textContent = "(waits for GO)";
    } else { $("next-name").textContent = "—"; $("next-in").textContent = ""; }
    cues(data);
    layers(data.layers);
    const key = JSON.stringify(data.cues.map((c) => [c.start, c.end])) + data.playhead;
    if (key !== pictureKey) { pictureKey = key; timeline(); }
  }

  function cues(data) {
    if (!cueInfo) return;
    const key = data.cues.map((c) => c.name).join("\u0000");
    const body = $("cue-rows");
    if (key !== rowsKey) {
      rowsKey = key;
      body.textContent = "";
      for (const cue of data.cues) {
        const row = document.createElement("tr");
        row.dataset.cue = cue.name;
        for (const name of ["number", "name", "layer", "time", "sample", "duration", "state"]) {
          const cell = document.createElement("td");
          cell.className = name;
          row.appendChild(cell);
        }
        row.addEventListener("dblclick", () => send({ command: "select", cue: cue.name }));
        row.addEventListener("click", () => openEditor(row.dataset.cue));
        body.appendChild(row);
      }
    }
    const rows = body.children;
    data.cues.forEach((cue, index) => {
      const row = rows[index], info = cueInfo[index] || {};
      const cells = row.children;
      cells[0].textContent = info.number || cue.number;
      cells[1].textContent = cue.name;
      // A group's cues sit under it, indented a step per group they are in.
      const depth = depths[index] || 0;
      cells[1].style.paddingLeft = depth ? "calc(0.5em + " + depth * 1.5 + "em)" : "";
      cells[2].textContent = info.action ? "(" + info.action + ")" : cue.layer;
      cells[3].textContent = cue.start != null ? clock(cue.start / rate) : (info.manual ? "GO" : "—");
      cells[4].textContent = cue.start != null ? cue.start : "";
      const length = cue.start != null && cue.end != null ? cue.end - cue.start : info.frames;
      cells[5].textContent = length != null ? clock(length / rate) : "∞";
      row.dataset.state = cue.state;
      row.dataset.start = cue.start != null ? cue.start : "";
      row.classList.toggle("selected", cue.name === data.playhead);
      row.classList.toggle("next", !!data.next && data.next.name === cue.name);
      const stateCell = cells[6];
      if (cue.state === "playing" && cue.start != null && cue.end != null && cue.end > cue.start) {
        const done = Math.max(0, Math.min(1, (data.position - cue.start) / (cue.end - cue.start)));
        let bar = stateCell.querySelector(".progress > div");
        if (!bar) {
          stateCell.textContent = "playing ";
          const track = document.createElement("span");
          track.className = "progress";
          bar = document.createElement("div");
          track.appendChild(bar);
          stateCell.appendChild(track);
        }
        bar.style.width = (100 * done).toFixed(0) + "%";
      } else {
        // A cue another cue's GO places cannot be fired itself: it waits for that GO.
        stateCell.textContent = cue.state === "scheduled" ? "waiting"
          : cue.state === "waiting" ? (info.goOf ? "with GO of " + info.goOf : "waiting for GO") : cue.state;
      }
    });
  }

  function layers(list) {
    const box = $("meter-list");
    for (const layer of list.concat([{ name: "master" }])) {
      let meter = box.querySelector('.meter[data-name="' + CSS.escape(layer.name) + '"]');
      if (!meter) {
        meter = document.createElement("div");
        meter.className = "meter";
        meter.dataset.name = layer.name;
        meter.innerHTML = '<span class="name"></span><div class="bar"><div class="rms"></div><div class="peak"></div></div>'
          + '<span class="db"><span class="peak-db" title="peak, dBFS">-∞</span> <span class="rms-db" title="RMS, dBFS">-∞</span></span>'
          + '<span class="hold"></span><span class="clip">CLIP</span>';
        meter.querySelector(".name").textContent = layer.name;
        if (layer.name !== "master") {
          const fader = document.createElement("label");
          fader.className = "fader";
          fader.innerHTML = '<span>gain</span><input type="range" min="-60" max="12" step="1" value="0"><output>0.0 dB</output>';
          const input = fader.querySelector("input"), output = fader.querySelector("output");
          input.setAttribute("aria-label", layer.name + " gain");
          input.dataset.layer = layer.name;
          let last = 0, sent = null;
          const push = (force) => {
            const now = Date.now();
            output.textContent = Number(input.value).toFixed(1) + " dB";
            if (Number(input.value) === sent || (!force && now - last < 50)) return;
            last = now;
            sent = Number(input.value);
            send({ command: "gain", layer: layer.name, gainDB: Number(input.value), ramp: 0.05 });
          };
          // A click on the track moves the fader one step toward it, not to it: only a drag (or
          // the keys) moves it further, so a stray click never jumps a layer by 20 dB.
          let pressed = null;
          input.addEventListener("pointerdown", (event) => { pressed = { value: Number(input.value), x: event.clientX, moved: false }; });
          input.addEventListener("pointermove", (event) => { if (pressed && Math.abs(event.clientX - pressed.x) > 3) pressed.moved = true; });
          input.addEventListener("pointerup", () => { pressed = null; });
          input.addEventListener("input", () => {
            if (pressed && !pressed.moved && Math.abs(Number(input.value) - pressed.value) > 1) {
              input.value = String(pressed.value + Math.sign(Number(input.value) - pressed.value));
            }
            push(false);
          });
          input.addEventListener("change", () => push(true));
          meter.appendChild(fader);
        }
        if (layer.name === "master") box.appendChild(meter); else box.insertBefore(meter, box.querySelector('.meter[data-name="master"]'));
      }
      if (layer.name !== "master") {
        const input = meter.querySelector("input");
        if (document.activeElement !== input && layer.gainDB !== undefined) {
          const value = layer.gainDB == null ? -60 : Math.max(-60, Math.min(12, layer.gainDB));
          input.value = value;
          meter.querySelector("output").textContent = (layer.gainDB == null ? "-∞" : Number(layer.gainDB).toFixed(1)) + " dB";
        }
      }
    }
  }

  function width(value) { return value == null ? 0 : Math.max(0, Math.min(100, (Number(value) + 60) / 60 * 100)); }

  function meters(message) {
    page.metersReceived += 1;
    page.lastMeters = message;
    $("now").textContent = clock(message.seconds);
    $("state").textContent = message.state;
    if (message.nextInSeconds != null) {
      $("next-name").textContent = message.next;
      $("next-in").textContent = "in " + clock(message.nextInSeconds);
    }
    const list = message.master ? message.layers.concat([message.master]) : message.layers;
    for (const level of list) {
      const meter = document.querySelector('.meter[data-name="' + CSS.escape(level.name) + '"]');
      if (!meter) continue;
      meter.querySelector(".rms").style.width = width(level.rmsDB) + "%";
      meter.querySelector(".peak").style.left = "calc(" + width(level.peakDB) + "% - 3px)";
      // Peak and RMS as numbers (dBFS) beside the bar; the loudest peak so far held under them.
      meter.querySelector(".peak-db").textContent = "pk " + db(level.peakDB);
      meter.querySelector(".rms-db").textContent = "rms " + db(level.rmsDB);
      meter.querySelector(".hold").textContent = level.holdDB == null ? "" : "hold " + db(level.holdDB);
      meter.dataset.peakDb = level.peakDB == null ? "" : level.peakDB;
      meter.dataset.rmsDb = level.rmsDB == null ? "" : level.rmsDB;
      meter.dataset.holdDb = level.holdDB == null ? "" : level.holdDB;
      const clip = meter.querySelector(".clip");
      clip.classList.toggle("lit", !!level.clip);
      clip.title = "hold " + db(level.holdDB) + " dB";
    }
    if (picture) {
      const x = picture.x0 + message.position / picture.samplesPerPixel;
      picture.playhead.setAttribute("x1", x.toFixed(1));
      picture.playhead.setAttribute("x2", x.toFixed(1));
      picture.playhead.setAttribute("visibility", "visible");
    }
  }

  function discontinuities(message) {
    $("discontinuity-count").textContent = message.total;
    const list = $("discontinuity-list");
    list.textContent = "";
    for (const entry of message.recent.slice().reverse()) {
      const item = document.createElement("li");
      item.textContent = entry.kind + " at device sample " + entry.sampleTime + ", " + entry.frames + " frames";
      list.appendChild(item);
    }
  }

  function timeline() {
    fetch("/timeline.svg" + query).then((r) => (r.ok ? r.text() : Promise.reject(r.status))).then((text) => {
      const box = $("timeline");
      box.innerHTML = text;
      const svg = box.querySelector("svg");
      picture = { x0: Number(svg.dataset.x0), samplesPerPixel: Number(svg.dataset.samplesPerPixel), playhead: svg.getElementById("playhead") };
    }).catch(() => {});
  }

  function button(id, command) {
    $(id).addEventListener("click", (event) => { send(command()); event.currentTarget.blur(); });
  }
  button("go", () => ({ command: "go" }));
  button("stop", () => ({ command: "stop" }));
  button("panic", () => ({ command: "panic" }));
  button("reset", () => ({ command: "reset" }));
  button("fade-out", () => ({ command: "panic", time: Math.max(0, Number($("fade-time").value) || 0) }));
  button("next", () => ({ command: "next" }));
  button("previous", () => ({ command: "previous" }));
  button("pause", () => ({ command: page.lastStatus && page.lastStatus.state === "paused" ? "resume" : "pause" }));
  document.addEventListener("keydown", (event) => {
    if (event.code === "Space" && !event.repeat && !(event.target instanceof HTMLInputElement && event.target.type !== "range")) {
      event.preventDefault();
      send({ command: "go" });
    }
  });

  // The editor: a click on a cue shows its keys as the session file writes them; apply sends a
  // `set` for each one changed (any key; empty removes it). Add, duplicate, delete and move
  // build the cue list. Errors (what `session check` would say) show under it.
  const commonKeys = ["name", "number", "type", "layer", "at", "pre_wait", "post_wait", "continue", "group"];
  const typeKeys = {
    audio: ["file", "gain", "fade_in", "fade_out", "from", "to", "loop"],
    fade: ["target", "level", "duration", "curve", "stop_target"],
    stop: ["target"], pause: ["target"], resume: ["target"], devamp: ["target"], start: ["target"], goto: ["target"],
    load: ["target", "load_time"], wait: ["duration"], group: ["mode", "loop"],
    network: ["destination", "message"], midi: ["channel", "note", "cc", "value", "program", "msc"],
  };
  const cueTypes = ["audio", "fade", "stop", "pause", "resume", "devamp", "start", "goto", "load", "wait", "group", "network", "midi"];
  let allKeys = [];            // every key a cue takes (from /api/cues)
  let layerNames = [];         // the session's layers
  let media = [];              // the media folder's audio files
  let editing = null;          // the name of the cue in the editor
  let editsPending = 0;        // edit commands sent and not answered yet
  // The keys a single `set` edits as QLab's setters do (a continue mode also frees the next cue).
  const cueEditKeys = ["name", "number", "pre_wait", "post_wait", "continue", "duration", "from", "to", "gain"];
  const editVerbs = ["set", "undo", "redo", "save", "add", "duplicate", "delete", "move", "group", "learn", "set-layer", "unlearn"];
  let learning = null;         // the cue a MIDI learn waits for, and its triggers then
  let editable = false;         // whether this page may edit (from /api/cues)
  function field(key, info) {
    const label = document.createElement("label");
    label.textContent = key;
    let input;
    const choices = key === "continue" ? ["none", "auto-continue", "auto-follow"] : key === "type" ? cueTypes
      : key === "layer" ? [""].concat(layerNames) : key === "group" ? [""].concat(cueInfo.filter((c) => c.type === "group" && c.name !== info.name).map((c) => c.name))
      : null;
    if (choices) {
      input = document.createElement("select");
      for (const choice of choices) input.add(new Option(choice || (key === "group" ? "(top of the list)" : "(none)"), choice));
    } else {
      input = document.createElement("input");
      input.type = "text";
      if (key === "file") input.setAttribute("list", "media-files");
    }
    input.name = key;
    const values = info.values || {};
    input.value = key === "group" ? (info.group || "") : key === "type" ? info.type : values[key] || (key === "continue" ? "none" : "");
    input.dataset.original = input.value;
    input.addEventListener("input", () => input.classList.toggle("changed", input.value !== input.dataset.original));
    label.appendChild(input);
    return label;
  }
  function openEditor(name) {
    const info = (cueInfo || []).find((c) => c.name === name);
    if (!info) return;
    editing = name;
    for (const row of document.querySelectorAll("tr.editing")) row.classList.remove("editing");
    const row = document.querySelector('tr[data-cue="' + CSS.escape(name) + '"]');
    if (row) row.classList.add("editing");
    $("editor").hidden = false;
    $("edit-cue").textContent = name;
    $("edit-type").textContent = info.type;
    const triggers = info.triggers || [];
    $("edit-triggers").textContent = triggers.length ? "MIDI: " + triggers.join(", ") : "";
    if (learning && learning.cue === name && triggers.length > learning.count) {
      learning = null;
      $("edit-error").textContent = "";
    }
    const fields = $("edit-fields");
    fields.textContent = "";
    const shown = commonKeys.concat(typeKeys[info.type] || []);
    for (const key of Object.keys(info.values || {})) if (!shown.includes(key)) shown.push(key);
    for (const key of shown) fields.appendChild(field(key, info));
    const more = $("edit-more");
    more.textContent = "";
    more.add(new Option("…", ""));
    for (const key of allKeys) if (!shown.includes(key)) more.add(new Option(key, key));
  }
  $("edit-more").addEventListener("change", () => {
    const key = $("edit-more").value;
    const info = (cueInfo || []).find((c) => c.name === editing);
    if (!key || !info) return;
    const label = field(key, info);
    $("edit-fields").appendChild(label);
    $("edit-more").remove($("edit-more").selectedIndex);
    label.querySelector("input, select").focus();
  });
  function edited(message) {
    const box = $("edit-error");
    box.textContent = message.status === "error" ? ((message.address || "set") + ": " + message.data) : "";
    if (message.status === "ok" && message.data && message.data.cue && message.address !== "save") {
      editing = message.address === "delete" ? null : message.data.cue;
      if (!editing) { $("edit-cue").textContent = ""; $("edit-fields").textContent = ""; }
    }
    if (message.status === "ok" && message.address === "save") box.textContent = "";
    if (message.status === "error" && message.address === "save" && String(message.data).includes("changed on disk")) {
      // The file changed since it was read: keep it (do nothing), or replace it (its version
      // is kept in FILE.bak).
      const force = document.createElement("button");
      force.id = "save-force";
      force.type = "button";
      force.textContent = "save anyway";
      force.title = "Replace the file on disk with the edited show (the file as it was on disk is kept as .bak)";
      force.addEventListener("click", () => { box.textContent = ""; edit({ command: "save", force: true }); });
      box.append(" ", force);
    }
    if (message.status === "ok" && message.address === "learn" && learning) box.textContent = "waiting for a MIDI message…";
  }
  function edit(command) { editsPending++; send(command); }
  $("edit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!editing) return;
    const info = (cueInfo || []).find((c) => c.name === editing);
    // One edit for every key changed (checked together); a change of group is a move.
    const changed = [...$("edit-fields").querySelectorAll("input, select")].filter((input) => input.value !== input.dataset.original);
    const group = changed.find((input) => input.name === "group");
    const keys = changed.filter((input) => input.name !== "group");
    if (keys.length === 1 && cueEditKeys.includes(keys[0].name)) {
      edit({ command: "set", cue: editing, key: keys[0].name, value: keys[0].value.trim() === "" ? "none" : keys[0].value });
    } else if (keys.length > 0) {
      const values = {};
      for (const input of keys) values[input.name] = input.value.trim() === "" ? null : input.value;
      edit({ command: "set", cue: editing, values });
    }
    if (group) {
      const name = (keys.find((input) => input.name === "name") || {}).value || editing;
      // Into a group: at its end.
      const members = cueInfo.filter((c) => c.group === group.value && c.name !== editing);
      const last = members.length ? members[members.length - 1].name : undefined;
      edit(group.value ? { command: "move", cue: name, group: group.value, after: last } : { command: "move", cue: name, after: topLevelBefore(info) });
    }
  });
  // Out of a group: right after the group's top-level cue.
  function topLevelBefore(info) {
    let group = info.group;
    for (let guard = 0; guard < 16 && group; guard++) {
      const above = cueInfo.find((c) => c.name === group);
      if (!above || !above.group) return group;
      group = above.group;
    }
    return group;
  }
  function siblings(info) { return cueInfo.filter((c) => (c.group || null) === (info.group || null)); }
  $("add-cue").addEventListener("click", () => {
    const values = { at: "manual" };
    if (layerNames.length) values.layer = layerNames[0];
    if (media.length) values.file = media[0];
    const info = editing && (cueInfo || []).find((c) => c.name === editing);
    edit(info ? { command: "add", values, after: info.name } : { command: "add", values });
  });
  $("learn").addEventListener("click", () => {
    const info = editing && (cueInfo || []).find((c) => c.name === editing);
    if (!info) return;
    learning = { cue: info.name, count: (info.triggers || []).length };
    edit({ command: "learn", do: "go " + info.name });
  });
  $("unlearn").addEventListener("click", () => { if (editing) edit({ command: "unlearn", cue: editing }); });
  $("duplicate-cue").addEventListener("click", () => { if (editing) edit({ command: "duplicate", cue: editing }); });
  $("group-cue").addEventListener("click", () => { if (editing) edit({ command: "group", cue: editing }); });
  $("delete-cue").addEventListener("click", () => { if (editing) edit({ command: "delete", cue: editing }); });
  $("move-up").addEventListener("click", () => {
    const info = editing && cueInfo.find((c) => c.name === editing);
    if (!info) return;
    const list = siblings(info), at = list.findIndex((c) => c.name === info.name);
    if (at <= 0) return;
    edit(at === 1 ? { command: "move", cue: info.name, first: true, group: info.group || undefined }
      : { command: "move", cue: info.name, after: list[at - 2].name });
  });
  $("move-down").addEventListener("click", () => {
    const info = editing && cueInfo.find((c) => c.name === editing);
    if (!info) return;
    const list = siblings(info), at = list.findIndex((c) => c.name === info.name);
    if (at < 0 || at >= list.length - 1) return;
    edit({ command: "move", cue: info.name, after: list[at + 1].name });
  });
  button("undo", () => { editsPending++; return { command: "undo" }; });
  button("redo", () => { editsPending++; return { command: "redo" }; });
  button("save", () => { editsPending++; return { command: "save" }; });
  // The layer editor: a layer's gain, channel map and ports, as the file writes them.
  let layerValues = {};
  function showLayer() {
    const name = $("layer-name").value;
    const values = layerValues[name] || {};
    for (const input of $("layer-fields").querySelectorAll("input")) {
      input.value = values[input.name] || "";
      input.dataset.original = input.value;
    }
  }
  $("layer-name").addEventListener("change", showLayer);
  $("layer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const values = {};
    for (const input of $("layer-fields").querySelectorAll("input:not([disabled])")) {
      if (input.value !== input.dataset.original) values[input.name] = input.value.trim() === "" ? null : input.value;
    }
    if (Object.keys(values).length) edit({ command: "set-layer", layer: $("layer-name").value, values });
  });
  function loadLayers(list) {
    layerValues = list.layerValues || {};
    const select = $("layer-name"), chosen = select.value;
    if (select.options.length !== layerNames.length) {
      select.textContent = "";
      for (const name of layerNames) select.add(new Option(name, name));
    }
    if (chosen && layerNames.includes(chosen)) select.value = chosen;
    showLayer();
  }
  function loadMedia() {
    return fetch("/api/media" + query).then((r) => r.json()).then((list) => {
      media = list.files || [];
      const options = $("media-files");
      options.textContent = "";
      for (const file of media) options.appendChild(new Option(file, file));
      const ports = $("jack-ports");
      ports.textContent = "";
      for (const port of list.ports || []) ports.appendChild(new Option(port, port));
    }).catch(() => {});
  }

  // The cue list's numbers, names and lengths: at the start, and again when a cue is edited.
  function loadCues() {
    return fetch("/api/cues" + query).then((r) => r.json())
      .then((list) => {
        cueInfo = list.cues;
        rate = list.sampleRate;
        allKeys = list.keys || allKeys;
        layerNames = list.layers || layerNames;
        loadLayers(list);
        if (list.editable && !editable) {
          editable = true;
          $("editor").hidden = false;
          loadMedia();
        }
        if (editing) openEditor(editing);
        rowsKey = null;
        const byName = new Map(cueInfo.map((c, i) => [c.name, i]));
        depths = cueInfo.map((c) => {
          let depth = 0;
          for (let group = c.group; group && depth < 16; depth++) group = (cueInfo[byName.get(group)] || {}).group;
          return depth;
        });
      }).catch(() => { cueInfo = cueInfo || []; });
  }
  loadCues().finally(connect);
})();
