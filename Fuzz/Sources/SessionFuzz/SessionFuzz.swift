import Foundation
import Lockstep
import LockstepFiles
import LockstepSession

/// The folder below, removed when the fuzzer exits.
let fixtureRoot = NSTemporaryDirectory() + "lockstep-session-fuzz-\(getpid())"

/// A folder with the audio files the seed sessions (Fuzz/corpus/session) name, made once per run:
/// `Sessions/` holds the session (never written: it is parsed from memory) and short WAVs at
/// 48 kHz, 44.1 kHz and in stereo; `Layers/` the stems Examples/Sessions/stems.yaml names.
let fixtureDirectory: String = {
    let root = fixtureRoot
    atexit { try? FileManager.default.removeItem(atPath: fixtureRoot) }
    let sessions = root + "/Sessions", layers = root + "/Layers"
    for folder in [sessions, layers] {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    func write(_ path: String, frames: Int, rate: Double, channels: Int, format: SampleFormat = .float32) {
        let samples = (0..<frames * channels).map { Float($0 % 97) / 128 - 0.375 }
        do {
            let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: format))
            try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: frames) }
            try writer.close()
        } catch {
            fatalError("the session fuzzer cannot write its audio fixture \(path): \(error)")
        }
    }
    for name in ["a", "b", "c", "one", "tiny", "ramp", "click", "kick", "bell", "intro", "vox", "pad", "track1", "track2", "track3", "bed"] {
        write("\(sessions)/\(name).wav", frames: 480, rate: 48000, channels: 1)
    }
    write("\(sessions)/slow.wav", frames: 441, rate: 44100, channels: 1)
    write("\(sessions)/wide.wav", frames: 480, rate: 48000, channels: 2)
    write("\(sessions)/many.wav", frames: 48, rate: 48000, channels: 8)
    write("\(sessions)/empty.wav", frames: 0, rate: 48000, channels: 1)
    write("\(sessions)/low.wav", frames: 100, rate: 100, channels: 1)
    write("\(layers)/drums.wav", frames: 441, rate: 44100, channels: 2)
    write("\(layers)/bass.flac", frames: 480, rate: 48000, channels: 1, format: .int24)
    write("\(layers)/pad.aiff", frames: 220, rate: 22050, channels: 2, format: .int16)
    return sessions + "/fuzz.yaml"
}()

/// One input: UTF-8 text checked as a session file (as `lockstep session check` does), then its
/// timeline built at other rates and its manual cues fired. Anything but a ``SessionError`` for a
/// bad file — a trap, a hang, a leak, memory out of bounds — is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func sessionFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // Session.load refuses a file that is not UTF-8 before parsing; so does this.
    guard let data, let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else {
        return 0
    }
    let session: Session
    do {
        session = try Session.parse(text: text, path: fixtureDirectory)
    } catch {
        // Every diagnostic must name a place in the file and say something.
        for diagnostic in error.diagnostics {
            precondition(diagnostic.location.line >= 1 && diagnostic.location.column >= 1 && !diagnostic.message.isEmpty,
                         "a diagnostic without a place or a message: \(diagnostic)")
        }
        return 0
    }
    for rate in [session.document.rate, 44100, 8000, 768_000] {
        guard var timeline = try? session.timeline(rate: rate) else { continue }
        _ = timeline.end
        for cue in timeline.waitingCues { timeline.fire(cue.index, at: 48000) }
        _ = timeline.end
        for cue in timeline.cues.prefix(64) {
            if let length = cue.length {
                for k in [0, length / 2, max(0, length - 1)] { _ = SessionTimeline.envelope(cue, at: k) }
            }
        }
        for layer in timeline.layers.indices.prefix(16) { _ = timeline.layerGainDB(layer, at: 12345) }
    }
    return 0
}
