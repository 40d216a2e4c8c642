import Foundation
import LockstepFiles

/// Standard MIDI Files written byte by byte for tests (independent of the reader under test).
public enum MIDIFileFixtures {
    /// A variable-length quantity.
    public static func variableLength(_ value: Int) -> [UInt8] {
        var value = value
        var bytes = [UInt8(value & 0x7F)]
        value >>= 7
        while value > 0 {
            bytes.insert(UInt8(value & 0x7F) | 0x80, at: 0)
            value >>= 7
        }
        return bytes
    }

    /// One track's bytes (`MTrk` chunk) from (absolute tick, message) pairs in tick order; a
    /// SysEx message (`F0 … F7`) is written as an `F0` event with its length. Ends with End of
    /// Track.
    public static func track(_ events: [(tick: Int, bytes: [UInt8])], tempo microsecondsPerQuarter: Int? = nil) -> [UInt8] {
        var body: [UInt8] = []
        var last = 0
        if let microsecondsPerQuarter {
            body += [0x00, 0xFF, 0x51, 0x03, UInt8(microsecondsPerQuarter >> 16 & 0xFF),
                     UInt8(microsecondsPerQuarter >> 8 & 0xFF), UInt8(microsecondsPerQuarter & 0xFF)]
        }
        for event in events {
            body += variableLength(event.tick - last)
            last = event.tick
            if event.bytes.first == 0xF0 {
                body += [0xF0] + variableLength(event.bytes.count - 1) + event.bytes.dropFirst()
            } else {
                body += event.bytes
            }
        }
        body += [0x00, 0xFF, 0x2F, 0x00]
        return Array("MTrk".utf8) + be32(body.count) + body
    }

    /// A whole file: header (`format`, `division`) and the tracks given.
    public static func file(format: Int = 0, division: Int = 480, tracks: [[UInt8]]) -> [UInt8] {
        Array("MThd".utf8) + be32(6) + be16(format) + be16(tracks.count) + be16(division) + tracks.joined()
    }

    /// A format 0 file in which one tick is one sample at 48 kHz (480 ticks a quarter note,
    /// 10 000 µs a quarter note), holding `events` (sample, message).
    public static func sampleExact(_ events: [(sample: Int, bytes: [UInt8])]) -> [UInt8] {
        file(division: 480, tracks: [track(events.map { ($0.sample, $0.bytes) }, tempo: 10_000)])
    }

    /// Writes `bytes` to `path`.
    public static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    public static func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    public static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
}

extension FileFixtures {
    /// Every sample of the audio file at `path`, interleaved, as floats.
    public static func readFloat(path: String) throws -> [Float] {
        let reader = try AudioFileReader(path: path)
        defer { reader.close() }
        var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
        _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        return samples
    }
}
