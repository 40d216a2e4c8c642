import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Synchronization
import Testing

/// Compressed test files made by the `ffmpeg` command (Scripts/setup.sh installs it) from one
/// source: `frames` frames of a stereo 44.1 kHz sine, 16-bit. Made once per test process; what
/// the files should hold is read back with `ffprobe`, a program independent of Lockstep.
final class CompressedFixtures: @unchecked Sendable {
    static let frames = 88_323
    static let rate = 44_100.0
    static let channels = 2
    static let shared: CompressedFixtures = try! CompressedFixtures()

    let directory: TemporaryTestDirectory
    private static let folderToRemove = Mutex<String?>(nil)
    /// The source's samples as 16-bit values scaled to −1…1, interleaved.
    let source: [Float]
    private let lock = NSLock()
    private var made: [String: String] = [:]

    private init() throws {
        directory = try TemporaryTestDirectory(prefix: "aqcompat-compressed")
        // `shared` is never deinitialized: its folder goes when the test process exits.
        let folder = directory.path
        Self.folderToRemove.withLock { $0 = folder }
        atexit { if let path = CompressedFixtures.folderToRemove.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) } }
        let sine = FileFixtures.sine(frames: Self.frames, channels: Self.channels, sampleRate: Self.rate, frequency: 441, amplitude: 0.5)
        source = sine.map { Float((Double($0) * 32768).rounded()) / 32768 }
        try FileFixtures.writeWAV(path: directory.file("source.wav"), samples: source,
                                  format: StreamFormat(sampleRate: Self.rate, channelCount: Self.channels, sampleFormat: .int16))
    }

    /// The file `name` made with ffmpeg's `arguments` from the source (once).
    func file(_ name: String, _ arguments: [String]) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let path = made[name] { return path }
        let path = directory.file(name)
        let result = try CLI.run(["-hide_banner", "-loglevel", "error", "-y", "-i", directory.file("source.wav")] + arguments + [path],
                                       timeout: 60, executable: "/usr/bin/ffmpeg")
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        made[name] = path
        return path
    }

    var mp3: String { get throws { try file("sine.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"]) } }
    var m4a: String { get throws { try file("sine.m4a", ["-c:a", "aac", "-b:a", "128k"]) } }
    var adts: String { get throws { try file("sine.aac", ["-c:a", "aac", "-b:a", "128k", "-f", "adts"]) } }
    var alacM4A: String { get throws { try file("sine-alac.m4a", ["-c:a", "alac"]) } }
    var alacCAF: String { get throws { try file("sine-alac.caf", ["-c:a", "alac"]) } }
    var ima4CAF: String { get throws { try file("sine-ima4.caf", ["-c:a", "adpcm_ima_qt"]) } }

    /// The length in frames `ffprobe` reads from the audio stream's header (an MPEG-4 edit list's).
    static func probeDuration(_ path: String) throws -> Int? {
        let result = try CLI.run(["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path],
                                 timeout: 60, executable: "/usr/bin/ffprobe")
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The packet sizes `ffprobe` reports for the file's audio stream.
    static func probePacketSizes(_ path: String) throws -> [Int] {
        let result = try CLI.run(["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size", "-of", "csv=p=0", path],
                                       timeout: 60, executable: "/usr/bin/ffprobe")
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        // One line a packet, "size," when side data follows (then a blank line).
        return result.stdout.split(separator: "\n").compactMap { line in line.split(separator: ",").first.flatMap { Int($0) } }
    }
}

/// Interleaved float PCM, 2 channels at 44.1 kHz, as an ExtAudioFile client format.
let floatClient44 = AudioStreamBasicDescription(mSampleRate: 44100, mFormatID: kAudioFormatLinearPCM, mFormatFlags: kAudioFormatFlagsNativeFloatPacked,
                                                mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                                mBitsPerChannel: 32, mReserved: 0)

/// `bytes` read as native floats.
func floats(_ bytes: [UInt8]) -> [Float] {
    bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

/// The lag (−`range`…`range` frames) at which `decoded` best matches `source` (channel 0), by
/// the sum of squared differences.
func bestLag(_ decoded: [Float], _ source: [Float], channels: Int, range: Int = 40) -> Int {
    let frames = min(decoded.count, source.count) / channels
    var best = (lag: 0, error: Double.infinity)
    for lag in -range...range {
        var error = 0.0
        for frame in Swift.max(0, -lag)..<Swift.min(frames, frames - lag) where frame % 7 == 0 {
            let d = Double(decoded[(frame + lag) * channels] - source[frame * channels])
            error += d * d
        }
        if error < best.error { best = (lag, error) }
    }
    return best.lag
}

/// The ratio, in dB, of the source's power to the power of the difference (channel by channel).
func signalToNoise(_ decoded: [Float], _ source: [Float]) -> Double {
    let n = min(decoded.count, source.count)
    var signal = 0.0, noise = 0.0
    for i in 0..<n {
        signal += Double(source[i]) * Double(source[i])
        let d = Double(decoded[i] - source[i])
        noise += d * d
    }
    return 10 * log10(signal / max(noise, 1e-30))
}

/// Checks decoded audio against the fixtures' source: equal when the codec is lossless, else
/// aligned to the frame (no priming left, none too many cut) and within 20 dB.
func expectMatchesSource(_ decoded: [Float], lossless: Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    let source = CompressedFixtures.shared.source
    #expect(decoded.count == source.count, comment, sourceLocation: sourceLocation)
    if lossless {
        #expect(decoded == source, comment, sourceLocation: sourceLocation)
    } else {
        #expect(bestLag(decoded, source, channels: CompressedFixtures.channels) == 0, comment, sourceLocation: sourceLocation)
        #expect(signalToNoise(decoded, source) > 20, comment, sourceLocation: sourceLocation)
    }
}
