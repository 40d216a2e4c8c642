import Foundation
import Lockstep
import LockstepSession
import LockstepTestSupport
import Testing

/// Building the cue list while the show runs: any key set, cues added, duplicated, deleted and
/// moved — each written into the session's text where it changes (every other line byte for
/// byte as it was), checked as `session check` checks the saved file, heard at once or from the
/// cue's next start, undone and redone. Rendered offline, sample by sample.
@Suite("Cue list structure edits: add, duplicate, delete, move, any key; text kept; sound exact")
struct CueStructureEditTests {
    static let text = """
        # A hand-written show.
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          # the bed
          - name: bed        # under everything
            layer: bed
            file: bed.wav
            at: 0
          - { name: bell, layer: fx, file: hit.wav, at: manual, number: 1 }   # first GO
          - name: scene
            type: group
            at: manual
            children:
              - { name: door, layer: fx, file: hit.wav }
        # the end
        triggers:
          - { note: 60, do: go }

        """

    static func show(_ text: String = text) throws -> OfflineShow {
        try OfflineShow(text, audio: [("bed.wav", Signals.constant(0.125, frames: 48000)),
                                      ("hit.wav", Signals.impulse(at: 0, frames: 64, value: 0.5)),
                                      ("other.wav", Signals.impulse(at: 0, frames: 64, value: 0.25))])
    }

    @Test("add after a cue, duplicate, move into a group, set a key, delete: the text changes only there, and reads back as the show plays it")
    func textEdits() throws {
        let show = try Self.show()
        let player = show.player
        try player.addCue([CueValue(key: "name", value: "horn"), CueValue(key: "layer", value: "fx"),
                           CueValue(key: "file", value: "other.wav")], at: .init(after: "bell"))
        #expect(try player.duplicateCue("bell").cue == "bell copy")
        try player.moveCue("horn", to: .init(group: "scene", after: "door"))
        try player.setValue("bell copy", key: "gain", value: "-6 dB")
        try player.setValue("bed", key: "file", value: "other.wav")
        let added = try player.addCue([CueValue(key: "file", value: "hit.wav"), CueValue(key: "layer", value: "fx"),
                                       CueValue(key: "at", value: "manual")])
        #expect(added.cue == "cue 7")
        try player.deleteCue("bell copy")
        let expected = """
            # A hand-written show.
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              # the bed
              - name: bed        # under everything
                layer: bed
                file: other.wav
                at: 0
              - { name: bell, layer: fx, file: hit.wav, at: manual, number: 1 }   # first GO
              - name: scene
                type: group
                at: manual
                children:
                  - { name: door, layer: fx, file: hit.wav }
                  - { name: horn, layer: fx, file: other.wav }
              - { name: cue 7, file: hit.wav, layer: fx, at: manual }
            # the end
            triggers:
              - { note: 60, do: go }

            """
        #expect(player.editedSession.text == expected)
        let reread = try Session.parse(text: expected, path: show.temp.file("show.yaml"))
        #expect(reread.document.cues.map(\.name) == player.document.cues.map(\.name))
        #expect(player.document.cues.map(\.name) == ["bed", "bell", "scene", "door", "horn", "cue 7"])
        #expect(player.timeline.cues.map(\.name) == ["bed", "bell", "scene", "door", "horn", "cue 7"])
        #expect(player.timeline.cues.map(\.index) == Array(0..<6))
    }

    @Test("a cue added while the show plays is fired by its GO on the replied sample; a deleted cue that sounds stops where its reply says; undo brings it back")
    func soundWhilePlaying() throws {
        let show = try Self.show("""
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }
              - { name: bell, layer: fx, file: hit.wav, at: manual }

            """)
        let player = show.player
        try show.render(4096)
        let added = try player.addCue([CueValue(key: "name", value: "horn"), CueValue(key: "layer", value: "fx"),
                                       CueValue(key: "file", value: "other.wav"), CueValue(key: "at", value: "manual")])
        #expect(!added.atNextStart && added.sample >= 4096)
        try player.select("horn")
        let fired = try player.go()
        #expect(fired.cue == "horn")
        try show.render(until: Int(fired.start) + 100)
        let s = Int(fired.start)
        #expect(show.output[s - 1] == 0.125 && show.output[s] == 0.125 + 0.25 && show.output[s + 1] == 0.125)
        // The bed goes: it stops where the delete lands, with the 5 ms declick fade.
        try show.render(until: s + 4096)
        let deleted = try player.deleteCue("bed")
        let d = Int(deleted.sample)
        try show.render(until: d + 1000)
        #expect(show.output[d - 1] == 0.125 && show.output[(d + 240)...].allSatisfy { $0 == 0 })
        #expect(show.output[d + 120] > 0 && show.output[d + 120] < 0.125)
        // Undo: the bed is a cue again; its time (0, looping) has passed, so it sounds in step
        // from the undo's sample, as a render of the show with the bed plays there.
        try show.render(until: d + 4096)
        let undone = try player.undo()
        #expect(undone.key == "delete" && player.document.cues.map(\.name) == ["bed", "bell", "horn"])
        #expect(player.timeline.cues[0].start == 0)
        let u = Int(undone.sample)
        try show.render(until: u + 2000)
        #expect(show.output[(d + 240)..<u].allSatisfy { $0 == 0 } && show.output[u..<(u + 2000)].allSatisfy { $0 == 0.125 },
                "the bed is back from sample \((u..<(u + 2000)).first { show.output[$0] == 0.125 } ?? -1), the undo at \(u)")
        let redone = try player.redo()
        #expect(redone.key == "delete" && player.document.cues.map(\.name) == ["bell", "horn"])
        #expect(try player.undo().key == "delete")
        #expect(try player.undo().key == "add" && player.document.cues.map(\.name) == ["bed", "bell"])
    }

    @Test("a show built from an empty cue list plays as the file it saves")
    func fromEmpty() throws {
        let show = try Self.show("""
            channels: 1
            layers: { fx: {} }
            cues: []

            """)
        let player = show.player
        for (index, file) in ["hit.wav", "other.wav", "hit.wav"].enumerated() {
            try player.addCue([CueValue(key: "layer", value: "fx"), CueValue(key: "file", value: file),
                               CueValue(key: "at", value: "manual"), CueValue(key: "pre_wait", value: "\(index * 100) samples")])
        }
        #expect(player.editedSession.text == """
            channels: 1
            layers: { fx: {} }
            cues:
              - { name: cue 1, layer: fx, file: hit.wav, at: manual, pre_wait: 0 samples }
              - { name: cue 2, layer: fx, file: other.wav, at: manual, pre_wait: 100 samples }
              - { name: cue 3, layer: fx, file: hit.wav, at: manual, pre_wait: 200 samples }

            """)
        try show.render(1024)
        var starts: [Int] = []
        for _ in 0..<3 {
            let fired = try player.go()
            starts.append(Int(fired.start))
            try show.render(until: Int(fired.start) + 512)
        }
        #expect(starts.map { show.output[$0] } == [0.5, 0.25, 0.5])
        #expect(zip(starts, [0, 100, 200]).allSatisfy { start, wait in show.output[(start - wait)..<start].allSatisfy { $0 == 0 } })
        // Deleting them all writes the list empty again.
        for name in ["cue 1", "cue 2", "cue 3"] { try player.deleteCue(name) }
        #expect(player.editedSession.text.contains("cues: []\n"))
    }

    @Test("group: a cue put in a new group that takes its place and its start keys; the text changes only there; the group's GO sounds the cue on its sample; undo")
    func grouping() throws {
        let show = try Self.show()
        let player = show.player
        #expect(try player.groupCue("bell").cue == "bell group")
        try player.groupCue("bed", as: "under")
        let expected = """
            # A hand-written show.
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              # the bed
              - name: under
                type: group
                mode: timeline
                at: 0
                children:
                  - name: bed        # under everything
                    layer: bed
                    file: bed.wav
              - name: bell group
                type: group
                mode: timeline
                at: manual
                children:
                  - { name: bell, layer: fx, file: hit.wav, number: 1 }   # first GO
              - name: scene
                type: group
                at: manual
                children:
                  - { name: door, layer: fx, file: hit.wav }
            # the end
            triggers:
              - { note: 60, do: go }

            """
        #expect(player.editedSession.text == expected, "\(player.editedSession.text)")
        _ = try Session.parse(text: expected, path: show.temp.file("show.yaml"))
        #expect(player.document.cues.map(\.name) == ["under", "bed", "bell group", "bell", "scene", "door"])
        try show.render(4096)
        let fired = try player.go()
        #expect(fired.cue == "bell group")
        let f = Int(fired.start)
        try show.render(until: f + 100)
        #expect(show.output[f - 1] == 0.125 && show.output[f] == 0.125 + 0.5, "\(show.output[(f - 1)...(f + 1)])")
        func refused(_ edit: () throws(PlayerError) -> SessionPlayer.EditResult) -> String {
            do { _ = try edit(); return "" } catch { return error.message }
        }
        #expect(refused { () throws(PlayerError) in try player.groupCue("door", as: "scene") }.contains("already named 'scene'"))
        #expect(try player.undo().key == "group")
        #expect(try player.undo().key == "group")
        #expect(player.editedSession.text == Self.text)
    }

    @Test("refusals say what session check says, name the cue, and change nothing")
    func refusals() throws {
        let show = try Self.show()
        let player = show.player
        let before = player.editedSession.text
        func refused(_ edit: () throws(PlayerError) -> SessionPlayer.EditResult) -> String {
            do { _ = try edit(); return "" } catch { return error.message }
        }
        #expect(refused { () throws(PlayerError) in try player.addCue([CueValue(key: "file", value: "missing.wav")]) }.contains("missing.wav"))
        #expect(refused { () throws(PlayerError) in try player.deleteCue("door") }.contains("only cue of group 'scene'"))
        #expect(refused { () throws(PlayerError) in try player.setValue("bell", key: "gian", value: "-3") }.contains("did you mean 'gain'"))
        #expect(refused { () throws(PlayerError) in try player.moveCue("scene", to: .init(group: "scene")) }.contains("cannot move into"))
        #expect(refused { () throws(PlayerError) in try player.duplicateCue("scene") }.contains("is a group"))
        #expect(refused { () throws(PlayerError) in try player.addCue([CueValue(key: "file", value: "hit.wav"), CueValue(key: "layer", value: "nowhere")]) }
            .contains("nowhere"))
        #expect(refused { () throws(PlayerError) in try player.setValue("bell", key: "name", value: "bed") }.contains("bed"))
        #expect(player.editedSession.text == before && player.undoDepth.undo == 0)
    }

    @Test("a layer's gain is heard from where its edit lands and written into its settings; its ports are written (offline they change nothing); its name and the channels are refused live")
    func layerEdits() throws {
        let show = try Self.show("""
            channels: 1
            layers: { bed: {}, fx: { gain: -3dB } }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }

            """)
        let player = show.player
        try show.render(4096)
        let edit = try player.setLayerValues("bed", [CueValueChange(key: "gain", value: "-6")])
        let e = Int(edit.sample)
        try show.render(until: e + 1000)
        let g = Float(SessionGain.linear(-6))
        #expect(show.output[e - 1] == 0.125 && show.output[e] == 0.125 * g && show.output[e + 999] == 0.125 * g)
        try player.setLayerValues("fx", [CueValueChange(key: "gain", value: "-12dB")])
        #expect(player.editedSession.text.contains("layers: { bed: { gain: -6 }, fx: { gain: -12dB } }\n"), "\(player.editedSession.text)")
        func refused(_ edit: () throws(PlayerError) -> SessionPlayer.EditResult) -> String {
            do { _ = try edit(); return "" } catch { return error.message }
        }
        // Ports are written; offline (no outputs of its own) the layer stays in the mix.
        let ported = try player.setLayerValues("bed", [CueValueChange(key: "ports", value: "[system:playback_1]")])
        #expect(ported.routedSampleTime == nil && player.editedSession.text.contains("bed: { gain: -6, ports: [system:playback_1] }"),
                "\(player.editedSession.text)")
        try show.render(until: e + 2000)
        #expect(show.output[e + 1999] == 0.125 * g)
        #expect(try player.undo().key == "ports")
        #expect(refused { () throws(PlayerError) in try player.setLayerValues("bed", [CueValueChange(key: "gian", value: "-1")]) }
            .contains("did you mean 'gain'"))
        #expect(refused { () throws(PlayerError) in try player.setLayerValues("nope", [CueValueChange(key: "gain", value: "-1")]) }
            .contains("unknown layer 'nope'"))
        #expect(try player.undo().key == "gain")
        #expect(player.editedSession.text.contains("layers: { bed: { gain: -6 }, fx: { gain: -3dB } }\n"))
    }
}
