import Lockstep
import LockstepFiles
import LockstepSession

/// One input: a value as every number and time parser reads it — the one time syntax (session
/// keys, CLI options, typed `seek`, OSC and web strings: `SessionTime.parse` and its reasons), a
/// sample count (`--start-at`, `--midi-latency`), a gain (`SessionGain.parse`, `--gain`), a ramp
/// (`ControlRange`), a channel map (`ChannelMap(parsing:)`) — and its first 8 bytes as the
/// double an OSC or JSON argument carries (`ControlRange`'s checks). Each parser's answer must
/// be a value in its range or a reason that says something. A trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func numbersFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    let text = String(decoding: bytes, as: UTF8.self)
    let rate = Double(TimeLimit.maximumSampleRate)

    let time = SessionTime.parse(text)
    let reason = SessionTime.reason(for: text)
    precondition((time == nil) != (reason == nil), "parse and reason disagree on '\(text)'")
    if let time {
        precondition(time.isInRange, "'\(text)' parsed out of range: \(time)")
        _ = time.samples(at: rate)
        _ = time.description
    } else {
        precondition(!(reason ?? "").isEmpty)
        _ = TimeSyntaxError(subject: "--from", value: text).description
    }
    if let count = try? SessionTime.sampleCount(text, as: "--start-at") { precondition(count >= 0) }
    if let gain = SessionGain.parse(text) {
        precondition(!gain.isNaN && gain <= SessionGain.maximum, "'\(text)' parsed as \(gain) dB")
        _ = SessionGain.format(gain)
        _ = SessionGain.linear(gain)
    }
    if let ramp = try? ControlRange.ramp(text: text, for: "gain") {
        // (Samples are checked against an hour where the session's rate is known.)
        precondition(ramp.isInRange, "'\(text)' ramp \(ramp)")
        if case .seconds(let seconds) = ramp { precondition(seconds <= ControlRange.maximumRampSeconds, "'\(text)' ramp \(ramp)") }
        _ = ramp.samples(at: rate)
    }
    if let map = try? ChannelMap(parsing: text) {
        precondition(map.routes.allSatisfy { $0.input >= 1 && $0.output >= 1 && $0.gainDB <= 12 }, "'\(text)': \(map.routes)")
        _ = try? map.matrix(inputs: 8, outputs: 2)
    }

    if bytes.count >= 8 {
        let double = Double(bitPattern: UInt64(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(as: UInt64.self)))
        if let seconds = try? SessionTime.seconds(double, as: "seek") { _ = seconds.samples(at: rate) }
        if let time = try? ControlRange.time(seconds: double, for: "seek") { _ = time.samples(at: rate) }
        if let ramp = try? ControlRange.ramp(seconds: double, for: "gain") { _ = ramp.samples(at: rate) }
        if let gain = try? ControlRange.gain(double, for: "level") { precondition(gain <= SessionGain.maximum) }
        _ = SessionTime.seconds(double).isInRange
    }
    return 0
}
