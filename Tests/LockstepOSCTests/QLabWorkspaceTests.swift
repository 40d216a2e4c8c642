import Foundation
import LockstepControl
import LockstepOSC
import LockstepSession
import LockstepTestSupport
import Testing

/// Lockstep answering QLab's workspace queries the way Bitfocus Companion's *QLab (advance)*
/// module (figure53-qlab-advance 2.14.1, `qlabfb.js`) asks them: its connect sequence, its
/// `valuesForKeys` requests with its key list, its `/cue_id/{id}/…` commands, and the QLab-style
/// updates it follows. Offline: a session on an offline device, the server with a transport
/// that keeps what it sends (replies go back to the sender, as on the module's TCP connection).
@Suite("QLab workspace queries, as Companion's QLab (advance) module sends them (offline, no socket)")
struct QLabWorkspaceTests {
    /// The keys the module asks every cue for (`qCueRequest`, spaces and all).
    static let moduleKeys = #"["number","uniqueID","listName","type","mode","isPaused","duration","actionElapsed", "preWait", "postWait","parent","flagged","notes","autoLoad","colorName","isRunning","isAuditioning","isLoaded","armed","isBroken","continueMode","percentActionElapsed","cartPosition","infiniteLoop","holdLastFrame"]"#

    static let session = """
        channels: 1
        cues:
          - { name: bed, file: bed.wav, at: 0, number: 1 }
          - { name: bell, file: bell.wav, at: manual, number: 2.5 }
          - { name: horn, file: bell.wav, at: manual }
        """

    let bench: ServerBench
    let client: UInt16 = 40000

    init() throws {
        bench = try ServerBench(.init(repliesToSender: true), session: Self.session,
                                audio: [("bed.wav", Signals.constant(0.125, frames: 48000)), ("bell.wav", Signals.constant(0.25, frames: 24000))])
    }

    /// Sends `address` from the module's client and returns the decoded JSON of its one reply
    /// (failing if the reply is missing, or anything else was sent).
    func ask(_ address: String, _ arguments: [OSCArgument] = []) throws -> [String: Any] {
        try bench.receive(OSCMessage(address, arguments), from: client)
        let sent = bench.take()
        let replies = sent.filter { $0.message.address.hasPrefix("/reply") }
        try #require(replies.count == 1, "\(address): \(sent.map(\.message.address))")
        #expect(replies[0].message.address == "/reply" + address)
        #expect(replies[0].to == ServerBench.peer(client))
        return try #require(OSCTestPeer.json(replies[0].message))
    }

    /// The `data` of an ok reply to `address`.
    func data(_ address: String, _ arguments: [OSCArgument] = []) throws -> Any? {
        let reply = try ask(address, arguments)
        #expect(reply["status"] as? String == "ok", "\(address): \(reply)")
        return reply["data"]
    }

    /// `valuesForKeys` with the module's keys, for `cue` (`/cue/1`, `/cue_id/…`, `/cue/active`).
    func values(_ cue: String) throws -> [String: Any] {
        try #require(try data(cue + "/valuesForKeys", [.string(Self.moduleKeys)]) as? [String: Any])
    }

    var workspaceID: String { bench.server.workspace.uniqueID }
    var listID: String { bench.server.workspace.cueListID }

    @Test("the module's connect sequence: /version, /workspaces, /playheadID, /updates, /cueLists, settings — each answered in QLab's shape")
    func connectSequence() throws {
        // On the connection's 'ready': /connect, then prime_vars: /version, /workspaces, /connect.
        #expect(try data("/connect") as? String == "ok")
        let version = try ask("/version")
        #expect(version["status"] as? String == "ok" && version["data"] as? String == "5.0.0")
        #expect(version["workspace_id"] == nil)                       // an application method: no workspace_id
        let workspaces = try ask("/workspaces")
        #expect(workspaces["workspace_id"] == nil)
        let list = try #require(workspaces["data"] as? [[String: Any]])
        #expect(list.count == 1)
        #expect(list[0]["displayName"] as? String == "show.yaml" && list[0]["hasPasscode"] as? Bool == false)
        #expect(list[0]["uniqueID"] as? String == workspaceID && list[0]["version"] as? String == "5.0.0")
        #expect(workspaceID.count == 36 && workspaceID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])

        // 5 s later, the second prime_vars.
        let playhead = try ask("/playheadID")
        #expect(playhead["workspace_id"] as? String == workspaceID)   // a workspace method: its id
        let bellID = try #require(playhead["data"] as? String)
        #expect(try data("/updates") as? Bool == false)
        #expect(try data("/updates", [.int32(1)]) as? Bool == true)
        #expect(try data("/updates") as? Bool == true)
        let lists = try #require(try data("/cueLists") as? [[String: Any]])
        #expect(lists.count == 1)
        #expect(lists[0]["uniqueID"] as? String == listID && lists[0]["type"] as? String == "Cue List")
        #expect(lists[0]["name"] as? String == "Main Cue List" && lists[0]["number"] as? String == "")
        let cues = try #require(lists[0]["cues"] as? [[String: Any]])
        #expect(cues.map { $0["name"] as? String } == ["bed", "bell", "horn"])
        #expect(cues.map { $0["listName"] as? String } == ["bed", "bell", "horn"])
        #expect(cues.map { $0["number"] as? String } == ["1", "2.5", ""])
        #expect(cues.allSatisfy { $0["type"] as? String == "Audio" && $0["colorName"] as? String == "none" })
        #expect(cues.allSatisfy { $0["flagged"] as? Bool == false && $0["armed"] as? Bool == true })
        let ids = cues.compactMap { $0["uniqueID"] as? String }
        #expect(Set(ids).count == 3 && !ids.contains(listID))
        #expect(ids[1] == bellID)                                      // the playhead: the first manual cue
        #expect(Set(cues.flatMap(\.keys)) == ["uniqueID", "number", "name", "listName", "type", "colorName", "flagged", "armed"])
        // The selection is the playhead: the first manual cue.
        #expect((try data("/selectedCues") as? [[String: Any]])?.map { $0["uniqueID"] as? String } == [bellID])
        #expect(try values("/cue/selected")["uniqueID"] as? String == bellID)
        #expect(try data("/settings/general/minGoTime") as? Double == 0)
        #expect(try data("/doubleGoWindowRemaining") as? Double == 0)
        #expect(try data("/alwaysAudition") as? Bool == false)
        #expect(try data("/auditionMonitors") as? Bool == false)
        #expect(try data("/overrideWindow") as? Bool == false)
        #expect(try data("/showMode") as? Bool == true)
        #expect(try data("/liveFadePreview") as? Bool == false)
        #expect(try data("/settings/general/minGoTime") as? Int == 0)
        // The module's 15 override queries (prime_vars stage 2), each answered true: all on.
        for key in ShowOverrides.Key.allCases {
            let override = try ask("/overrides/\(key.rawValue)")
            #expect(override["status"] as? String == "ok" && override["data"] as? Bool == true, "\(key): \(override)")
        }

        // On the /cueLists reply: /cue/active/valuesForKeys (nothing plays yet? the bed does).
        let active = try values("/cue/active")
        #expect(active["uniqueID"] as? String == ids[0] && active["isRunning"] as? Bool == true)
        // On the /playheadID reply: /cue_id/{id}/children.
        #expect(try data("/cue_id/\(bellID)/children") as? [Any] != nil)
        #expect((try data("/cue_id/\(listID)/children") as? [[String: Any]])?.count == 3)

        // The IDs are stable: a second server on the same session file names them alike.
        let again = try ServerBench(.init(repliesToSender: true), session: Self.session,
                                    audio: [("bed.wav", Signals.constant(0.125, frames: 48000)), ("bell.wav", Signals.constant(0.25, frames: 24000))])
        #expect(again.server.workspace.uniqueID == workspaceID && again.server.workspace.cueIDs == ids)
    }

    @Test("valuesForKeys answers every key the module asks (unknown ones null), by number, unique ID, playhead; states and elapsed follow the session")
    func valuesForKeys() throws {
        let ids = bench.server.workspace.cueIDs
        try bench.show.render(12000)                                    // the bed plays 0.25 s of its 1 s
        bench.dispatcher.poll()
        let bed = try values("/cue/1")
        #expect(Set(bed.keys) == Set(try JSONDecoder().decode([String].self, from: Data(Self.moduleKeys.utf8))))
        #expect(bed["uniqueID"] as? String == ids[0] && bed["listName"] as? String == "bed" && bed["number"] as? String == "1")
        #expect(bed["type"] as? String == "Audio" && bed["colorName"] as? String == "none" && bed["parent"] as? String == listID)
        #expect(bed["isRunning"] as? Bool == true && bed["isPaused"] as? Bool == false && bed["isBroken"] as? Bool == false)
        #expect(bed["duration"] as? Double == 1 && bed["actionElapsed"] as? Double == 0.25 && bed["percentActionElapsed"] as? Double == 0.25)
        #expect(bed["preWait"] as? Int == 0 && bed["postWait"] as? Int == 0 && bed["continueMode"] as? Int == 0)
        #expect(bed["armed"] as? Bool == true && bed["flagged"] as? Bool == false && bed["notes"] as? String == "")
        #expect(bed["mode"] is NSNull && bed["cartPosition"] is NSNull)      // keys an Audio cue lacks: null
        #expect(bed["infiniteLoop"] as? Bool == false && bed["holdLastFrame"] as? Bool == false)
        let reply = try ask("/cue/1/valuesForKeys", [.string(#"["name"]"#)])
        #expect(reply["workspace_id"] as? String == workspaceID && reply["address"] as? String == "/cue/1/valuesForKeys")

        // The bell waits at the playhead: addressed by number, by unique ID, as the playhead.
        let bell = try values("/cue/2.5")
        #expect(bell["uniqueID"] as? String == ids[1] && bell["isRunning"] as? Bool == false && bell["duration"] as? Double == 0.5)
        #expect(bell["actionElapsed"] as? Double == 0 && bell["percentActionElapsed"] as? Double == 0)
        #expect(try values("/cue_id/\(ids[1])")["listName"] as? String == "bell")
        #expect(try values("/cue/playhead")["uniqueID"] as? String == ids[1])
        #expect(try values("/workspace/\(workspaceID)/cue_id/\(ids[2])")["listName"] as? String == "horn")
        #expect(try data("/cue/horn/uniqueID") as? String == ids[2])
        #expect(try data("/cue_id/\(listID)/playheadID") as? String == ids[1])

        // Loaded to a time: isLoaded, until its GO.
        #expect(try values("/cue/horn")["isLoaded"] as? Bool == false)
        #expect(try data("/cue/horn/loadAt", [.float(0.2)]) != nil)
        #expect(try values("/cue/horn")["isLoaded"] as? Bool == true && values("/cue/2.5")["isLoaded"] as? Bool == false)

        // Pausing the bed: isPaused, its elapsed time kept.
        #expect(try data("/cue_id/\(ids[0])/pause") != nil)
        try bench.show.render(2048)
        let paused = try values("/cue_id/\(ids[0])")
        #expect(paused["isPaused"] as? Bool == true && paused["isRunning"] as? Bool == false)
        let kept = try #require(paused["actionElapsed"] as? Double)
        try bench.show.render(4800)
        #expect(try values("/cue/active")["actionElapsed"] as? Double == kept)
        #expect((try data("/runningOrPausedCues") as? [[String: Any]])?.map { $0["name"] as? String } == ["bed"])
        #expect((try data("/runningCues") as? [Any])?.isEmpty == true)

        // Errors QLab also gives: no such cue; the module ignores valuesForKeys errors.
        #expect(try ask("/cue_id/NOPE/valuesForKeys", [.string("[]")])["status"] as? String == "error")
        #expect(try ask("/cue/bel/valuesForKeys", [.string("[]")])["data"] as? String == "unknown cue 'bel'; did you mean 'bed'?")
        #expect((try ask("/cue/1/valuesForKeys", [.string("name")])["data"] as? String)?.hasPrefix("/cue/1/valuesForKeys: name is not a JSON array of keys") == true)
        #expect(try ask("/cue/1/armed", [.int32(0)])["data"] as? String
            == "/cue/1/armed: armed is read-only in Lockstep; the keys a cue takes are continueMode, duration, endTime, name, number, postWait, preWait, startTime")
    }

    @Test("a load to a time pushes the cue's update (the module reads isLoaded again) and Lockstep's /update/cue/loaded, playing or stopped")
    func loadIsPushed() throws {
        let horn = bench.server.workspace.cueIDs[2]
        #expect(try data("/updates", [.int32(1)]) as? Bool == true)
        try bench.show.render(1000)
        bench.dispatcher.poll()
        _ = bench.take()
        for stopped in [false, true] {
            if stopped {
                try bench.receive(OSCMessage("/stop"), from: client)
                _ = bench.take()
            }
            try bench.receive(OSCMessage("/cue/horn/loadAt", [.float(stopped ? 0 : 0.2)]), from: client)
            let sent = bench.take()
            #expect(sent.contains { $0.message.address == "/update/workspace/\(workspaceID)/cue_id/\(horn)" }, "\(sent.map(\.message.address))")
            let loaded = try #require(sent.first { $0.message.address == "/update/cue/loaded" }.flatMap { OSCTestPeer.json($0.message) })
            #expect(loaded["cue"] as? String == "horn" && loaded["frames"] as? Int == (stopped ? 0 : 9600), "\(loaded)")
        }
    }

    @Test("/cue_id/{id}/start lands where the reply says; the playhead moves after /go; updates arrive as QLab's /update/workspace/… messages")
    func commandsAndUpdates() throws {
        let ids = bench.server.workspace.cueIDs
        #expect(try data("/updates", [.int32(1)]) as? Bool == true)
        let playhead = "/update/workspace/\(workspaceID)/cueList/\(listID)/playbackPosition"

        // /go: the bell fires, the playhead moves to the horn, pushed as playbackPosition {horn}.
        try bench.show.render(1000)
        bench.dispatcher.poll()                                         // the bed's start, reported
        _ = bench.take()
        try bench.receive(OSCMessage("/workspace/\(workspaceID)/go"), from: client)
        var sent = bench.take()
        let go = try #require(sent.first { $0.message.address == "/reply/workspace/\(workspaceID)/go" }.flatMap { OSCTestPeer.json($0.message) })
        #expect(go["workspace_id"] as? String == workspaceID && go["status"] as? String == "ok")
        let bellStart = try #require((go["data"] as? [String: Any])?["start"] as? Int)
        let moved = try #require(sent.first { $0.message.address == playhead })
        #expect(moved.message.arguments == [.string(ids[2])])
        #expect(try data("/playheadID") as? String == ids[2])
        #expect(try values("/cue/playhead")["listName"] as? String == "horn")

        // /cue_id/{horn}/start (the module's "Start cue ID"): the horn starts on the sample its reply names.
        try bench.show.render(1000)
        try bench.receive(OSCMessage("/cue_id/\(ids[2])/start"), from: client)
        sent = bench.take()
        let start = try #require(sent.first { $0.message.address == "/reply/cue_id/\(ids[2])/start" }.flatMap { OSCTestPeer.json($0.message) })
        let startData = try #require(start["data"] as? [String: Any])
        #expect(startData["cue"] as? String == "horn")
        let hornStart = try #require(startData["start"] as? Int)
        #expect(sent.first { $0.message.address == playhead }?.message.arguments == [])   // no manual cue waits now
        try bench.show.render(until: hornStart + 256)
        bench.dispatcher.poll()
        // Device sample = session sample here: the horn (0.25) sounds from its start over bed and bell.
        let output = bench.show.output
        try #require(output.count > hornStart && bellStart > 0, "output \(output.count), bell \(bellStart), horn \(hornStart)")
        #expect(output[hornStart - 1] == 0.375 && output[hornStart] == 0.625, "\(output[hornStart - 1]) \(output[hornStart])")
        #expect(output[bellStart - 1] == 0.125 && output[bellStart] == 0.375, "\(output[bellStart - 1]) \(output[bellStart])")
        sent = bench.take()
        let cueUpdates = sent.map(\.message.address).filter { $0.hasPrefix("/update/workspace/\(workspaceID)/cue_id/") }
        #expect(Set(cueUpdates) == Set([ids[1], ids[2]].map { "/update/workspace/\(workspaceID)/cue_id/\($0)" }))
        #expect(sent.contains { $0.message.address == "/update/cue/started" })  // Lockstep's own updates as before

        // The module asks the updated cue's values at the address the update named.
        let horn = try values("/workspace/\(workspaceID)/cue_id/\(ids[2])")
        #expect(horn["isRunning"] as? Bool == true && (horn["actionElapsed"] as? Double ?? 0) > 0)

        // togglePause on the active cue (the horn, started last) pauses it; again resumes it.
        #expect((try data("/cue/active/togglePause") as? [String: Any])?["cue"] as? String == "horn")
        try bench.show.render(1024)
        bench.dispatcher.poll()
        #expect(bench.take().contains { $0.message.address == "/update/workspace/\(workspaceID)/cue_id/\(ids[2])" })
        #expect(try values("/cue_id/\(ids[2])")["isPaused"] as? Bool == true)
        #expect((try data("/cue_id/\(ids[2])/togglePause") as? [String: Any])?["cue"] as? String == "horn")
        try bench.show.render(1024)
        #expect(try values("/cue_id/\(ids[2])")["isRunning"] as? Bool == true)

        // The list's own commands: /cue_id/{list}/stop stops every cue.
        #expect((try data("/cue_id/\(listID)/stop") as? [String: Any])?["cues"] != nil)
        try bench.show.render(1024)
        #expect((try data("/runningOrPausedCues") as? [Any])?.isEmpty == true)

        // /playheadID/{id}: a manual cue takes the playhead, played or not.
        #expect(try ask("/playheadID/\(ids[1])")["status"] as? String == "ok")
        #expect(try ask("/playheadID")["data"] as? String == ids[1])
    }

    @Test("with a passcode, /version and /workspaces answer (hasPasscode true), other queries only after /connect")
    func passcode() throws {
        let bench = try ServerBench(.init(passcode: "s3cret", repliesToSender: true), session: Self.session,
                                    audio: [("bed.wav", Signals.constant(0.125, frames: 48000)), ("bell.wav", Signals.constant(0.25, frames: 24000))])
        for address in ["/version", "/workspaces", "/cueLists", "/cue/1/valuesForKeys"] {
            try bench.receive(OSCMessage(address, address.hasSuffix("Keys") ? [.string("[]")] : []), from: 40000)
        }
        let replies = bench.take().compactMap { OSCTestPeer.json($0.message) }
        #expect(replies.map { $0["status"] as? String } == ["ok", "ok", "error", "error"])
        #expect((replies[1]["data"] as? [[String: Any]])?.first?["hasPasscode"] as? Bool == true)
        try bench.receive(OSCMessage("/connect", [.string("s3cret")]), from: 40000)
        try bench.receive(OSCMessage("/cueLists"), from: 40000)
        #expect(bench.take().compactMap { OSCTestPeer.json($0.message)?["status"] as? String } == ["ok", "ok"])
    }

    @Test("the identifiers are UUID-shaped, stable and distinct")
    func identifiers() throws {
        let workspace = bench.server.workspace
        let all = [workspace.uniqueID, workspace.cueListID] + workspace.cueIDs
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0.range(of: #"^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$"#, options: .regularExpression) != nil })
    }

    @Test("the module's Master Override action: /overrides/{key} 0 switches one off (its query then answers false; status lists it), 1 on again; an unknown key or value is one clear error; with network input from this machine off, commands are refused but queries, status and the overrides answer")
    func overrides() throws {
        let off = try ask("/overrides/midiOutputEnabled", [.int32(0)])
        #expect(off["status"] as? String == "ok" && off["data"] as? Bool == false, "\(off)")
        #expect(try ask("/overrides/midiOutputEnabled")["data"] as? Bool == false)
        #expect(!bench.dispatcher.overrides.isEnabled(.midiOutputEnabled))
        #expect(bench.dispatcher.execute(.status, address: "status").json.contains(#""overridesOff":["midiOutputEnabled"]"#))
        #expect(try ask("/overrides/midiOutputEnabled", [.bool(true)])["data"] as? Bool == true)
        #expect(bench.dispatcher.overrides.switchedOff.isEmpty)
        let unknown = try ask("/overrides/lightsEnabled")
        #expect(unknown["status"] as? String == "error" && (unknown["data"] as? String ?? "").contains("midiInputEnabled, midiOutputEnabled"), "\(unknown)")
        #expect(try ask("/overrides/oscOutputEnabled", [.int32(2)])["status"] as? String == "error")
        // Network input from this machine off: a GO is refused, a query and the override itself answer.
        #expect(try ask("/overrides/networkLocalInputEnabled", [.int32(0)])["data"] as? Bool == false)
        let go = try ask("/go")
        #expect(go["status"] as? String == "error" && (go["data"] as? String ?? "").contains("networkLocalInputEnabled is off"), "\(go)")
        #expect(try ask("/cue/bell/start")["status"] as? String == "error")
        #expect(try ask("/version")["status"] as? String == "ok")
        #expect(try ask("/overrides/networkLocalInputEnabled", [.int32(1)])["data"] as? Bool == true)
        #expect(try ask("/go")["status"] as? String == "ok")
    }
}
