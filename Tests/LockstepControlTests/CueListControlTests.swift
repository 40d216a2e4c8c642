import Foundation
import Lockstep
import LockstepControl
import LockstepSchema
import LockstepSession
import LockstepTestSupport
import Synchronization
import Testing

/// The cue list through the dispatcher: replies for a double GO, a reset, and a time-tagged GO of
/// a cue with its own offset.
@Suite("ControlDispatcher: the cue list's replies (offline)")
struct CueListControlTests {
    static let text = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0 }
          - { name: late, layer: fx, file: click.wav, at: manual, offset: 1 }
          - { name: bell, layer: fx, file: click.wav, at: manual }
        """

    func show() throws -> OfflineShow {
        try OfflineShow(Self.text, audio: [("bed.wav", Signals.constant(0.125, frames: 48000 * 4)),
                                           ("click.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))])
    }

    @Test("a cue fired again that starts and ends between two polls is still reported when a reset comes before the next poll")
    func refireBeforeReset() throws {
        let show = try show()
        let dispatcher = ControlDispatcher(player: show.player)
        let received = Mutex<[ControlUpdate]>([])
        let subscription = dispatcher.updates.subscribe { update in received.withLock { $0.append(update) } }
        defer { subscription.cancel() }
        try show.render(1024)
        #expect(dispatcher.execute(.go(.name("bell")), address: "go", atSampleTime: nil).isOK)
        try show.render(4096)
        dispatcher.poll()
        #expect(dispatcher.execute(.go(.name("bell")), address: "go", atSampleTime: nil).isOK)
        try show.render(4096)                                          // heard and over, no poll
        let background = show.renderInBackground()
        #expect(dispatcher.execute(.reset, address: "reset", atSampleTime: nil).isOK)
        background.stop()
        dispatcher.poll()
        let bells = received.withLock { $0.filter { $0.kind == .cueStarted && $0.cue == "bell" } }
        #expect(bells.count == 2, "\(received.withLock { $0.map { "\($0.kind) \($0.cue ?? "")" } })")
    }

    @Test("a time-tagged GO of a cue with its own offset lands on its tag: the offset is not called late")
    func offsetIsNotLateness() throws {
        let show = try show()
        let dispatcher = ControlDispatcher(player: show.player)
        try show.render(1024)
        let tag = Int64(24000)
        let reply = dispatcher.execute(.go(nil), address: "/go", atSampleTime: tag)
        #expect(reply.isOK, "\(reply)")
        #expect(reply.summary.hasSuffix(", as time-tagged"), "\(reply.summary)")
        #expect(reply.data?["lateFrames"] == .integer(0) && reply.data?["start"] == .integer(tag + 48000), "\(reply.json)")
    }

    @Test("a second plain GO inside the window is answered doubleGo and changes nothing; reset answers with the playhead and where the top plays")
    func doubleGoAndReset() throws {
        let show = try show()
        show.player.doubleGoWindow = 14400
        let dispatcher = ControlDispatcher(player: show.player)
        try show.render(1024)
        #expect(dispatcher.execute(.go(nil), address: "go").isOK)
        let second = dispatcher.execute(.go(nil), address: "go")
        #expect(second.code == .doubleGo && second.summary.contains("inside the 14400-sample double-GO window"), "\(second.json)")
        #expect(show.player.playhead == "bell" && show.player.ignoredGoCount == 1)
        let background = show.renderInBackground()
        let reset = dispatcher.execute(.reset, address: "reset")
        background.stop()
        #expect(reset.isOK, "\(reset.json)")
        #expect(reset.data?["playhead"] == .string("late") && reset.data?["position"] == .integer(0))
        #expect(reset.data?["cues"] == .array([.string("bed"), .string("late")]), "\(reset.json)")
        #expect(reset.summary.hasPrefix("reset: 2 cues stopped, every cue waits, playhead on late; the session plays from its start at device sample "))
        #expect(show.player.timeline.cues[1].start == nil && show.player.playhead == "late")
    }

    @Test("a typed or web set edits a cue: the reply names the key, the value and when it applies; a bad key or value is one clear error")
    func setCommands() throws {
        let show = try show()
        let dispatcher = ControlDispatcher(player: show.player)
        try show.render(1024)
        let typed = dispatcher.execute(try ControlLine.parse("set bell pre_wait 250ms"), address: "set")
        #expect(typed.isOK && typed.summary.hasPrefix("set bell pre_wait to 0.25 s: at once, from 0:00."), "\(typed.json)")
        #expect(typed.data?["edited"] == .string("pre_wait") && typed.data?["atNextStart"] == .bool(false))
        #expect(show.player.timeline.cues[2].offsetFromTrigger == 12000)
        let (web, address) = try WebCommand.parse(#"{"command":"set","cue":"bell","key":"gain","value":-6}"#)
        #expect(dispatcher.execute(web, address: address).isOK && show.player.timeline.cues[2].gainDB == -6)
        let cleared = try WebCommand.parse(#"{"command":"set","cue":"bell","key":"pre_wait","value":null}"#).command
        #expect(dispatcher.execute(cleared, address: "set").isOK && show.player.timeline.cues[2].offsetFromTrigger == 0)
        let playing = dispatcher.execute(try ControlLine.parse("set bed to 1"), address: "set")
        #expect(playing.summary.hasPrefix("set bed to to 1 s: it plays on as it was and takes the edit at its next start, from "), "\(playing.json)")
        #expect(throws: ControlError(.malformed, "unknown cue key 'prewait'; did you mean 'pre_wait'?; a cue's keys are \(CueValue.keys.joined(separator: ", "))")) {
            try ControlLine.parse("set bell prewait 2")
        }
        #expect(throws: ControlError.self) { try ControlLine.parse("set bell pre_wait soon") }
        #expect(throws: ControlError.self) { try ControlLine.parse("set bell") }
        #expect(throws: ControlError.self) { try WebCommand.parse(#"{"command":"set","cue":"bell","value":1}"#) }
    }

    @Test("group, typed and as web JSON: the cue in a new group that takes its place; the reply names the group; a bad form is one clear error")
    func groupCommands() throws {
        let show = try show()
        let dispatcher = ControlDispatcher(player: show.player)
        try show.render(1024)
        #expect(try ControlLine.parse("group \"bell\" as \"the scene\"") == .restructure(.group(.name("bell"), name: "the scene")))
        let typed = dispatcher.execute(try ControlLine.parse("group bell"), address: "group")
        #expect(typed.isOK && typed.summary.hasPrefix("put bell in the new group bell group: at once, from "), "\(typed.json)")
        #expect(typed.data?["cue"] == .string("bell group") && typed.data?["edited"] == .string("group"))
        #expect(show.player.editedSession.text.contains("  - name: bell group\n    type: group\n    mode: timeline\n    at: manual\n    children:\n      - { name: bell, layer: fx, file: click.wav }\n"),
                "\(show.player.editedSession.text)")
        let (web, address) = try WebCommand.parse(#"{"command":"group","cue":"late","name":"later"}"#)
        #expect(dispatcher.execute(web, address: address).isOK && show.player.document.cues.map(\.name) == ["bed", "later", "late", "bell group", "bell"])
        #expect(throws: ControlError.self) { try ControlLine.parse("group") }
        #expect(throws: ControlError.self) { try ControlLine.parse("group bell as") }
        #expect(throws: ControlError.self) { try WebCommand.parse(#"{"command":"group"}"#) }
        #expect(!dispatcher.execute(try ControlLine.parse("group nothing"), address: "group").isOK)
    }
}
