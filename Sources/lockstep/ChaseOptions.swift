import ArgumentParser
import LockstepSession
import LockstepShow
import LockstepTimecode

/// `--chase` and its settings, and `--transport-master`: `session run` following incoming
/// timecode, or driving JACK transport.
struct ChaseOptions: ParsableArguments {
    @Option(name: .customLong("chase"), help: ArgumentHelp(
        "Follow incoming timecode: ltc:PORT (LTC on a JACK audio port, read on the client's input in_1), mtc:PORT (MIDI time code on a JACK MIDI port, read on midi_in) or transport (JACK transport: the same as --transport). The session locates to the timecode when it starts or jumps and stops when it stops; --ltc-fps and --ltc-start give its rate and the label of session time 0 (Docs/Timecode.md).",
        valueName: "source"))
    var source: String?

    @Option(name: .customLong("chase-offset"), help: ArgumentHelp(
        "With --chase: session time = timecode time + this (may be negative: -2.5, \"-4800 samples\"; default 0).", valueName: "time"))
    var offsetText: String?

    @Option(name: .customLong("chase-jump"), help: ArgumentHelp(
        "With --chase: how many frames the timecode must be off the session's position to relocate it (default 1).", valueName: "frames"))
    var jumpFrames: Int?

    @Option(name: .customLong("chase-freewheel"), help: ArgumentHelp(
        "With --chase: how long the session plays on when the timecode stops or drops out, before it stops too (default 0.2).", valueName: "time"),
            transform: TimeOption.parse)
    var freewheel: SessionTime?

    @Flag(name: .customLong("transport-master"), help: "Drive JACK transport from the session: it locates and rolls on every start, seek and resume of the session, and stops when the session pauses or stops, so other JACK clients follow it.")
    var transportMaster = false

    /// Whether the session chases JACK transport (`--chase transport`).
    var chasesTransport: Bool { source == "transport" }

    /// Checks the options against each other and `--transport`, `--midi`.
    func check(transport: Bool, midi: Bool) throws {
        if source == nil && (offsetText != nil || jumpFrames != nil || freewheel != nil) {
            throw ValidationError("--chase-offset, --chase-jump and --chase-freewheel set how --chase follows; give --chase too")
        }
        let chase = try parsedSource()
        if chasesTransport && transport { throw ValidationError("--chase transport is --transport; give one of them") }
        if transportMaster && (transport || source != nil) {
            throw ValidationError("--transport-master drives JACK transport from the session; it cannot also follow timecode or transport (--chase, --transport)")
        }
        if case .mtc = chase, midi {
            throw ValidationError("--chase mtc reads the client's MIDI input, which --midi uses for control; give one of them")
        }
        if chase == nil, chasesTransport, offsetText != nil || freewheel != nil || jumpFrames != nil {
            throw ValidationError("--chase transport follows JACK transport frame for frame; --chase-offset, --chase-jump and --chase-freewheel are for ltc: and mtc:")
        }
        if let jumpFrames, jumpFrames < 1 { throw ValidationError("--chase-jump \(jumpFrames): give 1 frame or more") }
        _ = try offsetSeconds(at: 48_000)
    }

    /// The LTC or MTC source (nil without `--chase`, or for `transport`).
    /// - Throws: ``ValidationError`` for a source of another form.
    func parsedSource() throws -> TimecodeChaser.Source? {
        guard let source, !chasesTransport else { return nil }
        let parts = source.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else {
            throw ValidationError("--chase '\(source)': give ltc:PORT, mtc:PORT or transport (e.g. --chase ltc:system:capture_1)")
        }
        switch parts[0] {
        case "ltc": return .ltc(port: parts[1])
        case "mtc": return .mtc(port: parts[1])
        default: throw ValidationError("--chase '\(source)': the source is ltc:PORT, mtc:PORT or transport, not '\(parts[0]):'")
        }
    }

    /// `--chase-offset` in seconds at `rate` (a count of samples counts at that rate).
    func offsetSeconds(at rate: Double) throws -> Double {
        guard var text = offsetText else { return 0 }
        let negative = text.hasPrefix("-")
        if negative || text.hasPrefix("+") { text.removeFirst() }
        guard let time = SessionTime.parse(text) else {
            throw ValidationError("--chase-offset '\(offsetText!)' \(SessionTime.reason(for: text) ?? "is not a time"); give a time such as 2.5, -250ms or \"-4800 samples\"")
        }
        let seconds = Double(time.samples(at: rate)) / rate
        return negative ? -seconds : seconds
    }

    /// The chase setting at the device's `rate` (nil without an LTC or MTC source).
    func setting(timecode: TimecodeOptions, session: SessionDocument, rate: Double) throws -> TimecodeChaser.Setting? {
        guard let source = try parsedSource() else { return nil }
        let (_, start) = try timecode.resolved(session.timecode)
        return TimecodeChaser.Setting(source: source, rate: timecode.givenRate ?? session.timecode?.rate, start: start,
                                      offsetSeconds: try offsetSeconds(at: rate), jumpFrames: jumpFrames ?? 1,
                                      freewheelSeconds: freewheel.map { Double($0.samples(at: rate)) / rate } ?? 0.2)
    }
}
