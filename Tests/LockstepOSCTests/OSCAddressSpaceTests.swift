import LockstepControl
import LockstepOSC
import LockstepSession
import Testing

@Suite("QLab's OSC dictionary mapped onto control commands")
struct OSCAddressSpaceTests {
    func request(_ address: String, _ arguments: [OSCArgument] = []) throws(ControlError) -> OSCRequest {
        try OSCAddressSpace.request(for: OSCMessage(address, arguments))
    }

    func problem(_ address: String, _ arguments: [OSCArgument] = []) -> String {
        do { _ = try request(address, arguments); return "" } catch { return error.message }
    }

    @Test("/undo, /redo and /lockstep/save [force] are the typed undo, redo and save; anything else sent with them is refused")
    func editHistory() throws {
        #expect(try request("/undo") == .command(.undo) && ControlLine.parse("undo") == .undo)
        #expect(try request("/workspace/1/redo") == .command(.redo) && ControlLine.parse("redo") == .redo)
        #expect(try request("/lockstep/save") == .command(.save(force: false)) && ControlLine.parse("save") == .save(force: false))
        #expect(try request("/lockstep/save", [.string("force")]) == .command(.save(force: true)) && ControlLine.parse("save force") == .save(force: true))
        #expect(problem("/undo", [.int32(1)]).contains("/undo"))
        #expect(problem("/lockstep/save", [.string("now")]).contains("takes nothing, or the string \"force\""))
    }

    @Test("one time syntax: OSC /lockstep/seek, typed seek and session files read every form alike, and name the value and the forms when it is not a time",
          arguments: ["90", "1:30", "1:30.5", "4800 samples", "1.5s", "250ms", "1:02:03", "0.5"])
    func timeSyntax(_ text: String) throws {
        let time = try #require(SessionTime.parse(text))
        #expect(try request("/lockstep/seek", [.string(text)]) == .command(.seek(time)))
        #expect(try ControlLine.parse("seek \(text)") == .seek(time))
        #expect(try SessionTime.parse(text, as: "--from") == time)
        var parser = SessionParser(path: "s.yaml", text: "cues:\n  - { name: a, file: a.wav, at: \(text) }\n")
        #expect(try parser.parse().cues.first?.start == .at(time))
        // Ramps take the same syntax (up to an hour: 1:02:03 is refused alike, see rampRange):
        // OSC gain, typed gain and level, session automation.
        guard time.seconds(at: 48000) <= ControlRange.maximumRampSeconds else { return }
        #expect(try request("/lockstep/layer/bed/gain", [.float(-6), .string(text)]) == .command(.setLayerGain(layer: "bed", decibels: -6, ramp: time)))
        #expect(try ControlLine.parse("gain bed -6 \(text)") == .setLayerGain(layer: "bed", decibels: -6, ramp: time))
        #expect(try ControlLine.parse("level bell -6dB \(text)") == .setCueLevel(.name("bell"), decibels: -6, ramp: time))
        var automation = SessionParser(path: "s.yaml", text: """
            layers: { bed: {} }
            cues:
              - { name: a, layer: bed, file: a.wav, at: 0 }
            automation:
              - { layer: bed, at: 0, gain: -6dB, ramp: \(text) }

            """)
        #expect(try automation.parse().automation.first?.ramp == time)
    }

    @Test("a value that is not a time is named with the forms, wherever it comes from")
    func notATime() throws {
        #expect(problem("/lockstep/seek", [.string("1:75")]) == "/lockstep/seek: s:\"1:75\" is not a time; \(SessionTime.formsHint)")
        #expect(throws: ControlError(.malformed, "seek '1:75' is not a time; \(SessionTime.formsHint)")) { try ControlLine.parse("seek 1:75") }
        #expect(throws: TimeSyntaxError(subject: "--from", value: "soon")) { try SessionTime.parse("soon", as: "--from") }
        #expect(TimeSyntaxError(subject: "--from", value: "soon").description.hasPrefix("--from 'soon' is not a time; write seconds (90, 1.5 or 1.5s)"))
    }

    @Test("every address and argument form")
    func addresses() throws {
        #expect(try request("/go") == .command(.go(nil)))
        #expect(try request("/go", [.string("bell")]) == .command(.go(.name("bell"))))
        #expect(try request("/go", [.int32(3)]) == .command(.go(.number(3))))
        #expect(try request("/go", [.float(3)]) == .command(.go(.number(3))))
        #expect(try request("/stop") == .command(.stop))
        #expect(try request("/pause") == .command(.pause))
        #expect(try request("/resume") == .command(.resume))
        #expect(try request("/panic") == .command(.panic))
        #expect(try request("/cue/bell/start") == .command(.startCue(.name("bell"))))
        #expect(try request("/cue/2/stop") == .command(.stopCue(.name("2"))))
        #expect(try request("/cue/bed/pause") == .command(.pauseCue(.name("bed"))))
        #expect(try request("/cue/bed/resume") == .command(.resumeCue(.name("bed"))))
        #expect(try request("/cue/bell/go") == .command(.go(.name("bell"))))
        #expect(try request("/cue/bed/level", [.float(-6)]) == .command(.setCueLevel(.name("bed"), decibels: -6, ramp: 0)))
        #expect(try request("/cue/bed/level", [.int32(0), .int32(0), .double(-12)]) == .command(.setCueLevel(.name("bed"), decibels: -12, ramp: 0)))
        #expect(try request("/cue/bed/level", [.string("-inf")]) == .command(.setCueLevel(.name("bed"), decibels: -.infinity, ramp: 0)))
        #expect(try request("/playhead/horn") == .command(.selectPlayhead(.name("horn"))))
        #expect(try request("/select/next") == .command(.selectNext))
        #expect(try request("/select/previous") == .command(.selectPrevious))
        #expect(try request("/playhead/next") == .command(.selectNext))
        #expect(try request("/playhead/previous") == .command(.selectPrevious))
        #expect(try request("/reset") == .command(.reset))
        #expect(try request("/select/horn") == .command(.selectPlayhead(.name("horn"))))
        #expect(try request("/select/2.5") == .command(.selectPlayhead(.name("2.5"))))
        #expect(try request("/select_id/ABC") == .cueCommand(.uniqueID("ABC"), .select))
        #expect(try request("/cue/selected/start") == .cueCommand(.selected, .start))
        #expect(try request("/cue_id/LIST/reset") == .cueCommand(.uniqueID("LIST"), .reset))
        #expect(try request("/cue_id/LIST/playhead/next") == .command(.selectNext))
        #expect(try request("/workspace/W/cue_id/LIST/playhead/previous") == .command(.selectPrevious))
        #expect(try request("/doubleGoWindowRemaining") == .query(.doubleGoWindowRemaining))
        #expect(try request("/panicInTime", [.float(2.5)]) == .command(.panicIn(.seconds(2.5))))
        #expect(try request("/lockstep/cue/bed/level", [.float(-12), .string("2s")]) == .command(.setCueLevel(.name("bed"), decibels: -12, ramp: .seconds(2))))
        #expect(try request("/lockstep/cue/3/level", [.string("-inf"), .float(0.5)]) == .command(.setCueLevel(.name("3"), decibels: -.infinity, ramp: .seconds(0.5))))
        #expect(throws: ControlError.self) { try request("/lockstep/cue/bed/level", [.float(-12), .float(5000)]) }
        #expect(try request("/cue/bed/panic") == .command(.panicCue(.name("bed"), fade: nil)))
        #expect(try request("/cue/bed/panicInTime", [.int32(3)]) == .command(.panicCue(.name("bed"), fade: .seconds(3))))
        #expect(try request("/cue/selected/panic") == .cueCommand(.selected, .panic(nil)))
        #expect(try request("/cue/3/loadAt", [.float(30)]) == .command(.loadCue(.name("3"), .seconds(30), .set)))
        #expect(try request("/cue/3/loadAt", [.int32(1), .int32(2), .float(3)]) == .command(.loadCue(.name("3"), .seconds(3723), .set)))
        #expect(try request("/cue/3/loadAt/+", [.float(5)]) == .command(.loadCue(.name("3"), .seconds(5), .later)))
        #expect(try request("/cue_id/ABC/loadAt/-", [.float(5)]) == .cueCommand(.uniqueID("ABC"), .loadAt(5, .earlier)))
        #expect(try request("/loadAt", [.float(10)]) == .cueCommand(.playhead, .loadAt(10, .set)))
        #expect(try request("/loadAt/+", [.float(1)]) == .cueCommand(.playhead, .loadAt(1, .later)))
        #expect(try request("/cue/selected/load") == .cueCommand(.selected, .loadAt(0, .set)))
        #expect(try request("/playhead/nextSequence") == .command(.selectNext))
        #expect(try request("/playhead/previousSequence") == .command(.selectPrevious))
        #expect(try request("/cue_id/LIST/cue/active/togglePause") == .cueCommand(.active, .togglePause))
        #expect(try request("/workspace/A/workspace/B/panic") == .command(.panic))
        #expect(throws: ControlError.self) { try request("/panicInTime") }
        #expect(throws: ControlError.self) { try request("/panicInTime", [.float(4000)]) }
        #expect(throws: ControlError.self) { try request("/cue/3/loadAt", [.float(-1)]) }
        #expect(try request("/lockstep/layer/bed/gain", [.float(-20)]) == .command(.setLayerGain(layer: "bed", decibels: -20, ramp: 0)))
        #expect(try request("/lockstep/layer/bed/gain", [.float(-20), .float(2)]) == .command(.setLayerGain(layer: "bed", decibels: -20, ramp: 2)))
        // A ramp as a string takes the one time syntax.
        #expect(try request("/lockstep/layer/bed/gain", [.float(-20), .string("4800 samples")])
            == .command(.setLayerGain(layer: "bed", decibels: -20, ramp: .samples(4800))))
        #expect(try request("/lockstep/layer/bed/gain", [.string("-6dB"), .string("250ms")])
            == .command(.setLayerGain(layer: "bed", decibels: -6, ramp: .seconds(0.25))))
        #expect(try request("/lockstep/layer/bed/gain", [.float(-20), .string("0:01.5")])
            == .command(.setLayerGain(layer: "bed", decibels: -20, ramp: .seconds(1.5))))
        #expect(try request("/lockstep/seek", [.double(90)]) == .command(.seek(.seconds(90))))
        #expect(try request("/lockstep/seek", [.string("96000 samples")]) == .command(.seek(.samples(96000))))
        #expect(try request("/lockstep/seek", [.string("1:30")]) == .command(.seek(.seconds(90))))
        #expect(try request("/lockstep/status") == .command(.status))
        #expect(try request("/connect") == .connect(nil))
        #expect(try request("/connect", [.string("s3cret")]) == .connect("s3cret"))
        #expect(try request("/updates", [.int32(1)]) == .updates(true))
        #expect(try request("/updates", [.bool(false)]) == .updates(false))
        #expect(try request("/udpReplyPort", [.int32(9001)]) == .replyPort(9001))
        #expect(try request("/thump") == .thump)
        #expect(try request("/workspace/5F1A/go") == .command(.go(nil)))                 // QLab's workspace form
        #expect(try request("/workspace/default/cue/3/start") == .command(.startCue(.name("3"))))
    }

    @Test("a seek's number is checked before it becomes samples: 1e30 (float or double), 2^62, a week and a second, NaN and -1 are refused with the range, as typed seek refuses them",
          arguments: [OSCArgument.float(1e30), .double(1e30), .int64(1 << 62), .int64(.max), .double(604_801), .int32(.max),
                      .double(.nan), .double(.infinity), .double(-1), .float(-.infinity)])
    func seekRange(_ argument: OSCArgument) throws {
        let message = problem("/lockstep/seek", [argument])
        let number = try #require(argument.number)
        let range = number.isNaN || number.isInfinite ? "is not a finite number of seconds; send 0 to 604800 (a week)"
            : number < 0 ? "is negative" : "is past the limit: a time is at most a week (604800 s, or \(SessionTime.maximumSamples) samples)"
        #expect(message.hasPrefix("/lockstep/seek: \(argument) \(range)"), "\(message)")
        // The same number reaches the dispatcher's range check however a command was made.
        #expect(throws: ControlRangeError.self) { try ControlRange.time(.seconds(number), for: "seek") }
    }

    @Test("/lockstep/seek 604801 is refused as typed seek 604801 is: past the documented week; 604800 itself is taken")
    func seekPastAWeek() throws {
        #expect(try request("/lockstep/seek", [.int32(604_800)]) == .command(.seek(.seconds(604_800))))
        #expect(try request("/lockstep/seek", [.string("168:00:00")]) == .command(.seek(.seconds(604_800))))
        let reason = try #require(SessionTime.reason(for: "604801"))
        #expect(reason.contains("at most a week (604800 s"))
        #expect(problem("/lockstep/seek", [.int32(604_801)]) == "/lockstep/seek: i:604801.0 \(reason)")
        #expect(problem("/lockstep/seek", [.string("604801")]) == "/lockstep/seek: s:\"604801\" \(reason)")
        #expect(throws: ControlError(.outOfRange, "seek '604801' \(reason)")) { try ControlLine.parse("seek 604801") }
    }

    @Test("a ramp or gain out of range is refused with one message and one range (0 to 3600 s, -inf to +12 dB) by OSC, typed lines and the web page alike",
          arguments: ["1e30", "3601", "-1", "nan", "1:02:03", "later"])
    func rampRange(_ value: String) throws {
        let number = Double(value)
        let shown = number.map { "\($0) s" } ?? "'\(value)'"
        let osc = problem("/lockstep/layer/bed/gain", [.float(-6), number.map { .double($0) } ?? .string(value)])
        #expect(osc == ControlRange.rampProblem(shown, for: "/lockstep/layer/bed/gain").message)
        #expect(osc.contains("is not a ramp of 0 to 3600 seconds"), "\(osc)")
        if number == nil || value == "3601" {        // the typed line takes the time syntax only
            #expect(throws: ControlError(.outOfRange, ControlRange.rampProblem("'\(value)'", for: "gain").message)) {
                try ControlLine.parse("gain bed -6 \(value)")
            }
        }
        #expect(problem("/cue/bell/level", [.double(1e30)]) == "/cue/bell/level: 1e+30 dB is out of range; a gain is -inf to +12 dB")
        #expect(problem("/lockstep/layer/bed/gain", [.double(.nan)]).hasPrefix("/lockstep/layer/bed/gain: "))
    }

    @Test("unknown addresses and wrong arguments say what the address takes")
    func mistakes() {
        #expect(problem("/og").hasPrefix("unknown address /og; did you mean '/go'?; Lockstep answers /go, /stop"))
        #expect(problem("/cue/bell/strat").hasPrefix("unknown address /cue/bell/strat; did you mean '/cue/{cue}/start'?"))
        #expect(problem("/stop", [.int32(1)]) == "/stop takes no arguments; it was sent 1 argument (i:1.0)")
        #expect(problem("/go", [.float(1.5)]) == "/go takes nothing, a cue name or a cue number; it was sent 1 argument (f:1.5)")
        #expect(problem("/go", [.string("a"), .string("b")]).hasPrefix("/go takes nothing, a cue name or a cue number"))
        #expect(problem("/cue//start") == "/cue//start names no cue; write the cue's name or number, e.g. /cue/1/start")
        #expect(problem("/cue/bed/level") == "/cue/bed/level takes a level in dB (or QLab's row 0, column 0, dB); it was sent no arguments")
        #expect(problem("/cue/bed/level", [.int32(1), .int32(2), .float(-3)])
            == "/cue/bed/level: Lockstep cues have one level (row 0, column 0); it was sent row 1.0, column 2.0")
        #expect(problem("/lockstep/layer/bed/gain", [.float(-3), .float(-1)]) == ControlRange.rampProblem("-1.0 s", for: "/lockstep/layer/bed/gain").message)
        #expect(problem("/lockstep/layer/bed/gain", [.float(-3), .string("later")]) == ControlRange.rampProblem("'later'", for: "/lockstep/layer/bed/gain").message)
        #expect(problem("/lockstep/seek", [.string("soon")]).hasPrefix("/lockstep/seek: s:\"soon\" is not a time"))
        #expect(problem("/udpReplyPort", [.int32(0)]) == "/udpReplyPort 0.0 is not a UDP port; send 1 to 65535")
        #expect(problem("/connect", [.int32(1234)]) == "/connect takes the passcode as one string; it was sent 1 argument (i:1234.0)")
        #expect(problem("/updates", [.blob([1])]) == "/updates takes 1 (send me updates) or 0 (stop); it was sent 1 argument (b:1 bytes)")
    }
}
