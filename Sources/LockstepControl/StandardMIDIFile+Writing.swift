extension StandardMIDIFile {
    /// The header division (ticks a quarter note) and tempo (µs a quarter note) that make one
    /// tick exactly one sample at `sampleRate` — the tempo nearest 120 bpm that does — or nil for
    /// a rate no Standard MIDI File can tick at exactly (a division past 32 767 ticks).
    public static func sampleTiming(sampleRate: Int) -> (division: Int, tempo: Int)? {
        guard sampleRate > 0 else { return nil }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        // tempo / division = 1 000 000 / rate µs a tick.
        let common = gcd(sampleRate, 1_000_000)
        let division = sampleRate / common, tempo = 1_000_000 / common
        guard division <= 0x7FFF, tempo <= 0xFF_FFFF else { return nil }
        let scale = max(1, min(0x7FFF / division, 0xFF_FFFF / tempo, Int((500_000.0 / Double(tempo)).rounded())))
        return (division * scale, tempo * scale)
    }

    /// The bytes of a format 0 Standard MIDI File holding `events` — each a whole message (a
    /// channel message, or SysEx from `F0` to `F7`) and the sample it plays on, sample 0 the
    /// file's start — with one tick a sample at `sampleRate` (``sampleTiming(sampleRate:)``), so
    /// that every message is on its exact sample. Ties keep their order.
    /// - Throws: ``StandardMIDIFileError`` for a rate no file ticks at exactly, a negative sample
    ///   or a message that is neither a channel message nor whole SysEx.
    public static func bytes(of events: [(sample: Int64, bytes: [UInt8])], sampleRate: Int,
                             path: String = "MIDI data") throws(StandardMIDIFileError) -> [UInt8] {
        guard let timing = sampleTiming(sampleRate: sampleRate) else {
            throw StandardMIDIFileError(path: path, offset: nil, "no Standard MIDI File ticks exactly once a sample at \(sampleRate) Hz; render at a rate such as 44100 or 48000")
        }
        var track: [UInt8] = []
        func variableLength(_ value: Int) {
            var groups = [UInt8(value & 0x7F)]
            var rest = value >> 7
            while rest > 0 {
                groups.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            track += groups.reversed()
        }
        // The tempo that makes a tick a sample.
        variableLength(0)
        track += [0xFF, 0x51, 0x03, UInt8(timing.tempo >> 16), UInt8((timing.tempo >> 8) & 0xFF), UInt8(timing.tempo & 0xFF)]
        let largestDelta = 0x0FFF_FFFF
        var tick: Int64 = 0
        for (index, event) in events.enumerated().sorted(by: { ($0.element.sample, $0.offset) < ($1.element.sample, $1.offset) }) {
            guard event.sample >= 0 else {
                throw StandardMIDIFileError(path: path, offset: nil, "event \(index) is at sample \(event.sample), before the file's start")
            }
            guard let status = event.bytes.first, status >= 0x80, status < 0xF0 || status == 0xF0 else {
                throw StandardMIDIFileError(path: path, offset: nil, "event \(index) is not a channel or SysEx message (it starts \(event.bytes.prefix(4))); a MIDI cue sends only those")
            }
            // A gap longer than a delta holds is bridged by empty text events.
            var delta = event.sample - tick
            while delta > Int64(largestDelta) {
                variableLength(largestDelta)
                track += [0xFF, 0x01, 0x00]
                delta -= Int64(largestDelta)
            }
            variableLength(Int(delta))
            tick = event.sample
            if status == 0xF0 {
                guard event.bytes.last == 0xF7, event.bytes.count >= 2 else {
                    throw StandardMIDIFileError(path: path, offset: nil, "event \(index) is a SysEx message that does not end with F7")
                }
                track.append(0xF0)
                variableLength(event.bytes.count - 1)
                track += event.bytes.dropFirst()
            } else {
                track += event.bytes
            }
        }
        variableLength(0)
        track += [0xFF, 0x2F, 0x00]
        func uint32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let header: [UInt8] = Array("MThd".utf8) + uint32(6) + [0, 0, 0, 1, UInt8(timing.division >> 8), UInt8(timing.division & 0xFF)]
        return header + Array("MTrk".utf8) + uint32(track.count) + track
    }
}
