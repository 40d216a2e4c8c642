import Foundation
import Lockstep
import LockstepControl
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Synchronization
import Testing

/// An offline show with a dispatcher (polled after every block rendered) and a subscriber that
/// keeps every update.
final class DispatchedShow: Sendable {
    let show: OfflineShow
    let dispatcher: ControlDispatcher
    let received = UpdateLog()
    private let subscription: ControlSubscription

    static let text = """
        channels: 1
        layers: { bed: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0, to: 1.0 }
          - { name: bell, layer: fx, file: click.wav, at: manual }
          - { name: horn, layer: fx, file: click.wav, at: manual }
        """

    init(options: ControlDispatcher.Options = .init()) throws {
        show = try OfflineShow(Self.text, audio: [("bed.wav", Signals.constant(0.125, frames: 48000 * 2)),
                                                  ("click.wav", Signals.impulse(at: 0, frames: 4800, value: 0.5))])
        let dispatcher = ControlDispatcher(player: show.player, options: options)
        self.dispatcher = dispatcher
        show.afterEachBlock = { dispatcher.poll() }
        subscription = dispatcher.updates.subscribe { [received] update in received.list.withLock { $0.append(update) } }
    }

    var output: [Float] { show.output }
    func render(_ frames: Int) throws { try show.render(frames) }
    func render(until count: Int) throws { try show.render(until: count) }

    /// The updates received so far of `kind`.
    func updates(_ kind: ControlUpdate.Kind) -> [ControlUpdate] { received.list.withLock { $0.filter { $0.kind == kind } } }
}

/// Every update a subscriber received.
final class UpdateLog: Sendable {
    let list = Mutex<[ControlUpdate]>([])
}

@Suite("ControlDispatcher: commands answered, changes published (offline)")
struct ControlDispatcherTests {
    @Test("go answers with the cue and its sample, the cue sounds on that sample, and cue/started reports it")
    func goLandsOnTheReportedSample() throws {
        let show = try DispatchedShow()
        try show.render(4096)
        let reply = show.dispatcher.execute(.go(nil), address: "/go")
        #expect(reply.isOK, "\(reply)")
        let start = try #require(reply.data?["start"]?.integerValue)
        #expect(reply.data?["cue"] == .string("bell"))
        #expect(reply.data?["sampleTime"] == .integer(start))               // offline: device sample = session sample
        #expect(reply.data?["playhead"] == .string("horn"))
        #expect(reply.summary == "go bell at \(SessionTime.clock(Double(start) / 48000)) (sample \(start))")
        #expect(reply.json.hasPrefix("{\"address\":\"/go\",\"data\":{"))
        #expect(reply.json.hasSuffix("\"status\":\"ok\"}"))
        try show.render(until: Int(start) + 4800)
        #expect(show.output.indices.filter { show.output[$0] > 0.5 } == [Int(start)])
        let started = show.updates(.cueStarted)
        #expect(started.map(\.cue) == ["bed", "bell"])
        #expect(started.last?.position == start && started.last?.sampleTime == start)
        #expect(show.updates(.playhead).map(\.cue) == ["horn"])
    }

    @Test("a load publishes cue/loaded with the samples the cue's next go starts it in, whether the show plays or is stopped")
    func loadIsPublished() throws {
        let show = try DispatchedShow()
        try show.render(4096)
        #expect(show.dispatcher.execute(.loadCue(.name("horn"), .seconds(0.05), .set), address: "load").isOK)
        #expect(show.dispatcher.execute(.stop, address: "stop").isOK)
        #expect(show.dispatcher.execute(.loadCue(.name("horn"), .seconds(0.025), .later), address: "load").isOK)
        #expect(show.dispatcher.execute(.loadCue(.name("horn"), .seconds(0), .set), address: "load").isOK)
        let loaded = show.updates(.cueLoaded)
        #expect(loaded.map(\.cue) == ["horn", "horn", "horn"] && loaded.map(\.frames) == [2400, 3600, 0]
                && loaded.map(\.seconds) == [0.05, 0.075, 0], "\(loaded)")
        #expect(loaded.first?.json == #"{"cue":"horn","frames":2400,"kind":"cue/loaded","schema":1,"seconds":0.05}"#, "\(loaded.first?.json ?? "")")
    }

    @Test("errors say why: an unknown cue (with a suggestion), a cue fired twice, no such cue number, the wrong state")
    func errorReplies() throws {
        let show = try DispatchedShow()
        let unknown = show.dispatcher.execute(.startCue(.name("horm")), address: "/cue/horm/start")
        #expect(unknown.status == .error)
        #expect(unknown.data == .string("start: unknown cue 'horm'; did you mean 'horn'?"))
        #expect(unknown.json == #"{"address":"/cue/horm/start","code":"unknownCue","data":"start: unknown cue 'horm'; did you mean 'horn'?","status":"error"}"#)
        #expect(unknown.code == .unknownCue)
        #expect(show.dispatcher.execute(.go(.name("bell")), address: "go").isOK)
        let twice = show.dispatcher.execute(.go(.name("bell")), address: "go")
        #expect(twice.isOK, "a cue fired again is placed anew: \(twice)")
        #expect(show.dispatcher.execute(.pauseCue(.name("bell")), address: "pause").isOK)
        let paused = show.dispatcher.execute(.go(.name("bell")), address: "go")
        #expect(paused.summary.contains("is paused; resume it") && paused.code == .wrongState)
        let number = show.dispatcher.execute(.go(.number(9)), address: "go")
        #expect(number.summary == "there is no cue number 9; the cues are numbered 1 to 3 in file order" && number.code == .unknownCue)
        let notManual = show.dispatcher.execute(.go(.name("bed")), address: "go")
        #expect(notManual.code == .notManual, "\(notManual)")
        let pauseWaiting = show.dispatcher.execute(.pauseCue(.name("horn")), address: "pause")
        #expect(pauseWaiting.summary.contains("waits for go") && pauseWaiting.code == .wrongState)
        let resume = show.dispatcher.execute(.resume, address: "resume")
        #expect(resume.summary.contains("not paused") && resume.code == .wrongState)
        let layer = show.dispatcher.execute(.setLayerGain(layer: "bd", decibels: -6, ramp: 0), address: "gain")
        #expect(layer.summary.contains("did you mean 'bed'?") && layer.code == .unknownLayer)
        // Success carries no code; the code survives a JSON round trip.
        #expect(show.dispatcher.execute(.status, address: "status").code == nil)
        #expect(try JSONSchema.decode(ControlReply.self, from: layer.json).code == .unknownLayer)
    }

    @Test("cues by number: 3 is the third cue of the file, as a name when no cue is called that")
    func cueNumbers() throws {
        let show = try DispatchedShow()
        let reply = show.dispatcher.execute(.startCue(.name("3")), address: "/cue/3/start")
        #expect(reply.data?["cue"] == .string("horn"))
        #expect(show.dispatcher.execute(.stopCue(.number(1)), address: "stop").data?["cue"] == .string("bed"))
    }

    @Test("pause, resume and stop of a cue, and the cue's end, are published with the samples they happen on")
    func cueUpdates() throws {
        let show = try DispatchedShow()
        try show.render(2048)
        let pause = show.dispatcher.execute(.pauseCue(.name("bed")), address: "pause")
        let silent = try #require(pause.data?["end"]?.integerValue)
        try show.render(8192)
        #expect(show.updates(.cuePaused).map(\.position) == [silent])
        let resume = show.dispatcher.execute(.resumeCue(.name("bed")), address: "resume")
        let back = try #require(resume.data?["start"]?.integerValue)
        try show.render(4096)
        #expect(show.updates(.cueResumed).map(\.position) == [back])
        let go = show.dispatcher.execute(.go(nil), address: "go")
        let bellStart = try #require(go.data?["start"]?.integerValue)
        try show.render(4800 + 4096)
        #expect(show.updates(.cueEnded).map(\.cue) == ["bell"])
        #expect(show.updates(.cueEnded).first?.position == bellStart + 4800)
        let stop = show.dispatcher.execute(.stopCue(.name("bed")), address: "stop")
        let stopped = try #require(stop.data?["end"]?.integerValue)
        try show.render(4096)
        #expect(show.updates(.cueStopped).map(\.position) == [stopped])
        #expect(show.output[Int(stopped)...].allSatisfy { $0 == 0 })
    }

    @Test("panic fades everything out over the panic time; a second panic during the fade stops at once")
    func panicTwice() throws {
        let show = try DispatchedShow(options: .init(panicFade: 0.5))
        try show.render(2048)
        let first = show.dispatcher.execute(.panic, address: "/panic")
        let start = try #require(first.data?["position"]?.integerValue)
        #expect(first.data?["silentFrom"] == .integer(start + 24000))
        try show.render(4096)
        let second = show.dispatcher.execute(.panic, address: "/panic")
        let again = try #require(second.data?["position"]?.integerValue)
        #expect(second.data?["silentFrom"] == .integer(again + 240))
        #expect(second.summary.hasPrefix("panic again: stopped at once"))
        try show.render(until: Int(again) + 1000)
        #expect(show.output[(Int(again) + 240)...].allSatisfy { $0 == 0 })
        #expect(show.output[Int(again) - 1] > 0.1)                    // still in the first, slow fade
        #expect(show.updates(.panic).count == 2)
        #expect(show.updates(.cueStopped).map(\.position) == [again + 240])
    }

    @Test("a start too late for its sample is published as late, with the sample it was for and the frames it skipped")
    func lateStartPublished() throws {
        let show = try DispatchedShow()
        try show.render(1024)
        #expect(show.updates(.late).isEmpty)
        // A restart placed on device sample 0, long gone: the layers start late and skip ahead to
        // stay on the session's timeline (the restart waits for buffers: render meanwhile).
        let rendering = show.show.renderInBackground()
        _ = try show.show.player.seek(to: 24000, at: 0)
        rendering.stop()
        show.dispatcher.poll()
        let start = try #require(show.show.player.lateStarts.last)
        #expect(start.skippedFrames > 0)
        let late = show.updates(.late)
        #expect(late.count == 1)
        #expect(late.first?.position == 24000 && late.first?.sampleTime == start.sampleTime && late.first?.frames == start.skippedFrames,
                "\(late) against \(start)")
    }

    @Test("status, seek, pause and resume: replies carry the state; seeked, paused and resumed are published")
    func statusAndTransport() throws {
        let show = try DispatchedShow()
        try show.render(1024)
        let status = show.dispatcher.execute(.status, address: "/lockstep/status")
        #expect(status.data?["state"] == .string("playing"))
        #expect(status.data?["playhead"] == .string("bell"))
        #expect(status.data?["event"] == .string("status"))
        let cues = try #require(status.data?["cues"])
        guard case .array(let list) = cues else { Issue.record("cues is not an array"); return }
        #expect(list.map { $0["state"] } == [.string("playing"), .string("waiting"), .string("waiting")])
        #expect(list.map { $0["number"] } == [.integer(1), .integer(2), .integer(3)])
        // Pausing and seeking while playing wait for the layers' buffers to come back: render meanwhile.
        let rendering = show.show.renderInBackground()
        #expect(show.dispatcher.execute(.pause, address: "pause").isOK)
        #expect(show.dispatcher.execute(.pause, address: "pause").summary.contains("paused already"))
        let seek = show.dispatcher.execute(.seek(.samples(30000)), address: "/lockstep/seek")
        #expect(seek.data?["position"] == .integer(30000))
        #expect(seek.data?["sampleTime"] == nil)                          // paused: it plays nowhere yet (left out)
        #expect(show.dispatcher.execute(.resume, address: "resume").data?["position"] == .integer(30000))
        let playing = show.dispatcher.execute(.seek(.seconds(0.5)), address: "/lockstep/seek")
        #expect(playing.data?["position"] == .integer(24000))
        #expect(playing.data?["sampleTime"]?.integerValue != nil)
        rendering.stop()
        #expect(show.updates(.seeked).map(\.position) == [30000, 24000])
        #expect(show.updates(.paused).count == 1 && show.updates(.resumed).map(\.position) == [30000])
    }

    @Test("a command made in code with a time or ramp past its range is an error reply, never a trap converting it to samples",
          arguments: [ControlCommand.seek(.seconds(1e30)), .seek(.seconds(.nan)), .seek(.seconds(-1)), .seek(.samples(.max)), .seek(.samples(-1)),
                      .setLayerGain(layer: "bed", decibels: -6, ramp: .seconds(1e30)), .setLayerGain(layer: "bed", decibels: -6, ramp: .samples(.max)),
                      .setLayerGain(layer: "bed", decibels: -6, ramp: .samples(48000 * 3601)), .setCueLevel(.name("bed"), decibels: -6, ramp: .seconds(-.infinity)),
                      .setCueLevel(.name("bed"), decibels: .nan, ramp: 0)])
    func outOfRange(_ command: ControlCommand) throws {
        let show = try DispatchedShow()
        try show.render(1024)
        let reply = show.dispatcher.execute(command, address: "cmd")
        #expect(!reply.isOK)
        #expect(reply.code == .outOfRange, "\(reply)")
        #expect(reply.summary.hasPrefix("cmd: ") || reply.summary.hasPrefix("gain: ") || reply.summary.hasPrefix("level: "), "\(reply.summary)")
        #expect(reply.summary.contains("a week") || reply.summary.contains("negative") || reply.summary.contains("0 to 3600 seconds")
                || reply.summary.contains("-inf to +12 dB") || reply.summary.contains("finite"), "\(reply.summary)")
        #expect(show.dispatcher.execute(.status, address: "status").data?["state"] == .string("playing"))
    }

    @Test("every reply's data is a schema type: decoding it as CommandResult (or ControlStatus) and encoding it again gives the same JSON")
    func replyDataIsTheSchema() throws {
        let show = try DispatchedShow()
        try show.render(4096)
        /// The reply's data, decoded as `type` and encoded again: the same object, so no key of
        /// the data lies outside the type.
        func roundTrip<T: Codable>(_ command: ControlCommand, as type: T.Type) throws -> T {
            let reply = show.dispatcher.execute(command, address: "test")
            #expect(reply.isOK, "\(command): \(reply)")
            let decoded = try reply.decodeData(type)
            #expect(JSONSchema.line(decoded) == reply.data?.json, "\(command)")
            return decoded
        }
        let go = try roundTrip(.go(nil), as: CommandResult.self)
        #expect(go.cue == "bell" && go.placed == ["bell"] && go.start == go.position && go.playhead == "horn" && go.schema == 1)
        #expect(go.sampleTime != nil && go.seconds == Double(go.position!) / 48000)
        let gain = try roundTrip(.setLayerGain(layer: "bed", decibels: -6.004, ramp: .samples(4800)), as: CommandResult.self)
        #expect(gain.layer == "bed" && gain.gainDB == -6 && gain.rampFrames == 4800 && gain.rampSeconds == 0.1)
        let silence = show.dispatcher.execute(.setCueLevel(.name("bed"), decibels: -.infinity, ramp: .seconds(0.5)), address: "level")
        #expect(silence.data?.json.contains("\"gainDB\":null") == true && silence.data?["rampFrames"] == .integer(24000), "\(silence)")
        #expect(try silence.decodeData(CommandResult.self).gainDB == nil)
        let paused = try roundTrip(.pauseCue(.name("bed")), as: CommandResult.self)
        #expect(paused.cue == "bed" && paused.end != nil)
        let select = try roundTrip(.selectPlayhead(.name("horn")), as: CommandResult.self)
        #expect(select.playhead == "horn" && select.position == nil)
        let stop = try roundTrip(.stop, as: CommandResult.self)
        #expect(stop.silentFrom != nil && stop.cues != nil)
        // Pausing and seeking while playing wait for the layers' buffers to come back: render meanwhile.
        let rendering = show.show.renderInBackground()
        let pause = try roundTrip(.pause, as: CommandResult.self)
        // (A pause names the sample its fade begins on, where the session is paused.)
        #expect(pause.position != nil && pause.sampleTime != nil)
        let seek = try roundTrip(.seek(.samples(9600)), as: CommandResult.self)
        #expect(seek.position == 9600 && seek.seconds == 0.2 && seek.sampleTime == nil)
        rendering.stop()
        let status = try roundTrip(.status, as: ControlStatus.self)
        #expect(status.event == "status" && status.schema == 1)
    }

    @Test("level and gain updates carry gainDB (null for -inf), heartbeat its state, layer/started its file")
    func updateFieldNames() throws {
        let show = try DispatchedShow()
        _ = show.dispatcher.execute(.setLayerGain(layer: "bed", decibels: -.infinity, ramp: 0), address: "gain")
        _ = show.dispatcher.execute(.setCueLevel(.name("bed"), decibels: -3.456, ramp: 0), address: "level")
        let gain = try #require(show.updates(.layerGain).first)
        #expect(gain.json.contains("\"gainDB\":null") && gain.layer == "bed" && !gain.json.contains("decibels"), "\(gain.json)")
        #expect(show.updates(.cueLevel).first?.gainDB == -3.46)
        let decoded = try JSONSchema.decode(ControlUpdate.self, from: gain.json)
        #expect(decoded == gain)
        let started = ControlUpdate(.layerStarted, file: "a.wav", sampleTime: 10)
        #expect(started.json == #"{"file":"a.wav","kind":"layer/started","sampleTime":10,"schema":1}"#)
    }

    @Test("a heartbeat is published once per interval, with the state and position")
    func heartbeat() throws {
        let show = try DispatchedShow(options: .init(heartbeatInterval: 1))
        let later = ContinuousClock.now + .seconds(2)
        show.dispatcher.poll(now: later)
        show.dispatcher.poll(now: later + .milliseconds(500))
        show.dispatcher.poll(now: later + .milliseconds(1000))
        let beats = show.updates(.heartbeat)
        #expect(beats.count == 2)
        #expect(beats.first?.state == "playing")
        #expect(beats.first?.json.contains("\"state\":\"playing\"") == true)
        #expect(beats.first?.json.contains("\"kind\":\"heartbeat\"") == true)
    }
}

@Suite("ControlLine: typed commands to ControlCommand")
struct ControlLineTests {
    @Test("every verb parses, with its cue, level, ramp or time")
    func verbs() throws {
        #expect(try ControlLine.parse("go") == .go(nil))
        #expect(try ControlLine.parse("GO bell") == .go(.name("bell")))
        #expect(try ControlLine.parse("start big horn") == .startCue(.name("big horn")))
        #expect(try ControlLine.parse("stop") == .stop)
        #expect(try ControlLine.parse("stop bed") == .stopCue(.name("bed")))
        #expect(try ControlLine.parse("pause") == .pause)
        #expect(try ControlLine.parse("pause 2") == .pauseCue(.name("2")))
        #expect(try ControlLine.parse("resume bed") == .resumeCue(.name("bed")))
        #expect(try ControlLine.parse("panic") == .panic)
        #expect(try ControlLine.parse("level bell -6dB 0.5") == .setCueLevel(.name("bell"), decibels: -6, ramp: 0.5))
        #expect(try ControlLine.parse("gain bed -inf") == .setLayerGain(layer: "bed", decibels: -.infinity, ramp: 0))
        // A ramp takes the one time syntax, as every time does.
        #expect(try ControlLine.parse("gain bed -6 4800 samples") == .setLayerGain(layer: "bed", decibels: -6, ramp: .samples(4800)))
        #expect(try ControlLine.parse("gain bed -6 250ms") == .setLayerGain(layer: "bed", decibels: -6, ramp: .seconds(0.25)))
        #expect(try ControlLine.parse("level bell -3 0:01.5") == .setCueLevel(.name("bell"), decibels: -3, ramp: .seconds(1.5)))
        #expect(try ControlLine.parse("level bell -3 1.5s") == .setCueLevel(.name("bell"), decibels: -3, ramp: .seconds(1.5)))
        #expect(try ControlLine.parse("next") == .selectNext)
        #expect(try ControlLine.parse("previous") == .selectPrevious)
        #expect(try ControlLine.parse("select horn") == .selectPlayhead(.name("horn")))
        #expect(try ControlLine.parse("seek 1:30") == .seek(.seconds(90)))
        #expect(try ControlLine.parse("seek 4800 samples") == .seek(.samples(4800)))
        #expect(try ControlLine.parse("status") == .status)
        #expect(try ControlLine.parse("reset") == .reset)
        #expect(throws: ControlError.self) { try ControlLine.parse("reset now") }
    }

    @Test("mistakes are errors that say how to write it")
    func mistakes() {
        func message(_ line: String) -> String {
            do { _ = try ControlLine.parse(line); return "" } catch { return error.message }
        }
        #expect(message("jump 3").hasPrefix("unknown command 'jump'; the commands are go, start"))
        #expect(message("staus") .hasPrefix("unknown command 'staus'; did you mean 'status'?"))
        #expect(message("seek soon") == "seek 'soon' is not a time; \(SessionTime.formsHint)")
        #expect(message("gain bed loud") == "'gain bed loud' is not 'gain LAYER DB [RAMP]'; write e.g. gain drums -12dB 2")
        #expect(message("level bell -3 later") == ControlRange.rampProblem("'later'", for: "level").message)
        #expect(message("start") == "'start' needs a cue: write 'start CUE' (a cue name, or its number)")
        #expect(message("status now") == "'status' takes nothing after it; write just 'status'")
        #expect(message("load bell") == "'load bell' is not 'load CUE TIME'; write e.g. load 3 0:30 (the cue's next go starts it 30 s in)")
        #expect(message("panic-in soon") == ControlRange.rampProblem("'soon'", for: "panic-in").message)
        func code(_ line: String) -> ControlErrorCode? {
            do { _ = try ControlLine.parse(line); return nil } catch { return error.code }
        }
        #expect(code("jump 3") == .unknownCommand)
        #expect(code("seek soon") == .malformed)
        #expect(code("seek 604801") == .outOfRange)
        #expect(code("gain bed loud") == .malformed)
        #expect(code("level bell -3 later") == .outOfRange)
        #expect(code("start") == .malformed)
    }
}
