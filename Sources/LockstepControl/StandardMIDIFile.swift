import Lockstep
import LockstepFiles

/// A Standard MIDI File (`.mid`, format 0 or 1) read as the MIDI control surface needs it: every
/// channel and SysEx message with its time in seconds, through the file's tempo map (or its SMPTE
/// timing), in time order.
///
/// Written here rather than taken from libsmf (Debian's `libsmf-dev` 1.3): fed 20 000 mutated
/// files, libsmf aborted the process on an assertion (`extract_sysex_event`), and a show must not
/// die on a damaged file. Every problem is a ``StandardMIDIFileError`` naming the byte offset.
///
/// ```swift
/// let file = try StandardMIDIFile(path: "cues.mid")
/// let events = file.events(sampleRate: 48_000)     // [MIDIEvent], sample 0 = the file's start
/// ```
public struct StandardMIDIFile: Sendable, Hashable {
    /// One message and its time.
    public struct Event: Sendable, Hashable {
        /// Seconds from the file's start.
        public var seconds: Double
        /// The message (running status expanded; a SysEx message from `F0` to `F7`).
        public var bytes: [UInt8]
        /// The track it is in (0 for the first).
        public var track: Int
    }

    /// The largest file read (16 MiB).
    public static let maximumFileBytes = 16 << 20

    /// The file's format: 0 (one track) or 1 (tracks played together).
    public let format: Int
    /// The tracks read.
    public let trackCount: Int
    /// Every message in time order (ties in track order, then file order).
    public let events: [Event]

    /// Reads the file at `path` (never blocking on a FIFO, device or socket).
    /// - Throws: ``StandardMIDIFileError`` naming the path and what is wrong.
    public init(path: String) throws(StandardMIDIFileError) {
        let contents: RegularFile.Contents
        do {
            contents = try RegularFile.read(path, maximumBytes: Self.maximumFileBytes)
        } catch {
            let prefix = path + ": "
            let problem = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            throw StandardMIDIFileError(path: path, offset: nil, error.kind == .notFound ? "no MIDI file here; check the path" : problem)
        }
        guard contents.size <= Int64(Self.maximumFileBytes) else {
            throw StandardMIDIFileError(path: path, offset: nil, "the file is \(contents.size >> 20) MiB, more than the \(Self.maximumFileBytes >> 20) MiB a MIDI file of cues may be")
        }
        try self.init(bytes: contents.bytes, path: path)
    }

    /// Reads a file's bytes; `path` names it in errors.
    /// - Throws: ``StandardMIDIFileError`` naming the byte offset and what is wrong.
    public init(bytes: [UInt8], path: String = "MIDI data") throws(StandardMIDIFileError) {
        var reader = Reader(bytes: bytes, path: path)
        guard bytes.count >= 14, bytes[0..<4].elementsEqual("MThd".utf8) else {
            throw StandardMIDIFileError(path: path, offset: 0, "not a Standard MIDI File (it does not start with 'MThd'); save the cues as a .mid file")
        }
        reader.position = 4
        let headerLength = Int(try reader.uint32())
        guard headerLength >= 6, headerLength <= bytes.count - 8 else {
            throw StandardMIDIFileError(path: path, offset: 4, "the header chunk says it is \(headerLength) bytes; it is 6")
        }
        let format = Int(try reader.uint16())
        let declaredTracks = Int(try reader.uint16())
        let division = try reader.uint16()
        reader.position = 8 + headerLength
        guard format == 0 || format == 1 else {
            throw StandardMIDIFileError(path: path, offset: 8, format == 2
                ? "a format 2 file holds independent patterns, not one timeline; save it as format 0 or 1"
                : "unknown format \(format); a Standard MIDI File is format 0 or 1")
        }
        let timing: Timing
        if division & 0x8000 == 0 {
            guard division > 0 else { throw StandardMIDIFileError(path: path, offset: 12, "the header gives 0 ticks per quarter note") }
            timing = .metrical(ticksPerQuarter: Int(division))
        } else {
            let frames = -Int(Int8(bitPattern: UInt8(division >> 8)))
            let ticks = Int(division & 0xFF)
            let rates: [Int: Double] = [24: 24, 25: 25, 29: 30000.0 / 1001, 30: 30]
            guard let rate = rates[frames], ticks > 0 else {
                throw StandardMIDIFileError(path: path, offset: 12, "SMPTE timing of \(frames) frames a second and \(ticks) ticks a frame; it is 24, 25, 29 (29.97) or 30 frames and at least 1 tick")
            }
            timing = .smpte(ticksPerSecond: rate * Double(ticks))
        }

        var raw: [(tick: Int64, track: Int, order: Int, bytes: [UInt8])] = []
        var tempos: [(tick: Int64, track: Int, order: Int, microseconds: Int)] = []
        var track = 0
        var order = 0
        while reader.position < bytes.count {
            guard bytes.count - reader.position >= 8 else {
                throw StandardMIDIFileError(path: path, offset: reader.position, "\(bytes.count - reader.position) stray bytes after the last chunk; the file is damaged")
            }
            let type = Array(bytes[reader.position..<(reader.position + 4)])
            reader.position += 4
            let length = Int(try reader.uint32())
            let start = reader.position
            guard length <= bytes.count - start else {
                throw StandardMIDIFileError(path: path, offset: start - 4, "a chunk says it is \(length) bytes but the file ends \(bytes.count - start) bytes later; the file is truncated")
            }
            defer { reader.position = start + length }
            guard type.elementsEqual("MTrk".utf8) else { continue }      // unknown chunks are skipped, as the standard says
            var trackReader = Reader(bytes: bytes, path: path, position: start, end: start + length)
            var tick: Int64 = 0
            var running: UInt8?
            var pendingSysEx: [UInt8]?
            var ended = false
            while trackReader.position < trackReader.end && !ended {
                tick += Int64(try trackReader.variableLength())
                guard tick <= Int64(Int32.max) * 256 else {
                    throw StandardMIDIFileError(path: path, offset: trackReader.position, "event times add up past any real length; the file is damaged")
                }
                let at = trackReader.position
                let first = try trackReader.byte()
                switch first {
                case 0xFF:
                    let type = try trackReader.byte()
                    let data = try trackReader.bytes(try trackReader.variableLength())
                    if type == 0x2F { ended = true }
                    if type == 0x51 {
                        guard data.count == 3 else {
                            throw StandardMIDIFileError(path: path, offset: at, "a tempo event holds \(data.count) bytes; it holds 3")
                        }
                        let microseconds = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                        guard microseconds > 0 else { throw StandardMIDIFileError(path: path, offset: at, "a tempo of 0 µs a quarter note") }
                        tempos.append((tick, track, order, microseconds))
                        order += 1
                    }
                    running = nil
                case 0xF0:
                    let data = try trackReader.bytes(try trackReader.variableLength())
                    if data.last == 0xF7 {
                        raw.append((tick, track, order, [0xF0] + data))
                        order += 1
                        pendingSysEx = nil
                    } else {
                        pendingSysEx = [0xF0] + data                 // continued in F7 packets
                    }
                    running = nil
                case 0xF7:
                    let data = try trackReader.bytes(try trackReader.variableLength())
                    if var pending = pendingSysEx {
                        pending += data
                        if data.last == 0xF7 {
                            raw.append((tick, track, order, pending))
                            order += 1
                            pendingSysEx = nil
                        } else {
                            pendingSysEx = pending
                        }
                    } else if !data.isEmpty {
                        raw.append((tick, track, order, data))          // an escaped message, as sent
                        order += 1
                    }
                    running = nil
                default:
                    var status = first
                    var firstData: UInt8?
                    if first < 0x80 {
                        guard let running else {
                            throw StandardMIDIFileError(path: path, offset: at, "data byte \(MIDIMessage.hex(first)) with no status byte before it (running status with nothing running)")
                        }
                        status = running
                        firstData = first
                    } else if first >= 0xF0 {
                        throw StandardMIDIFileError(path: path, offset: at, "status byte \(MIDIMessage.hex(first)) cannot stand in a track; a track holds channel messages, SysEx and meta events")
                    }
                    running = status
                    let count = (status & 0xE0) == 0xC0 ? 1 : 2
                    var message = [status]
                    if let firstData { message.append(firstData) }
                    while message.count < count + 1 {
                        let data = try trackReader.byte()
                        guard data < 0x80 else {
                            throw StandardMIDIFileError(path: path, offset: trackReader.position - 1, "a \(MIDIMessage.hex(status)) message is cut short by byte \(MIDIMessage.hex(data)); the file is damaged")
                        }
                        message.append(data)
                    }
                    raw.append((tick, track, order, message))
                    order += 1
                }
            }
            if pendingSysEx != nil {
                throw StandardMIDIFileError(path: path, offset: trackReader.position, "a SysEx message in track \(track + 1) never ends (no F7); the file is damaged")
            }
            track += 1
        }
        guard track > 0 else {
            throw StandardMIDIFileError(path: path, offset: 8 + headerLength, "the file has no track (the header says \(declaredTracks)); it holds no MIDI")
        }
        self.format = format
        trackCount = track
        let sorted = raw.sorted { ($0.tick, $0.track, $0.order) < ($1.tick, $1.track, $1.order) }
        switch timing {
        case .smpte(let ticksPerSecond):
            events = sorted.map { Event(seconds: Double($0.tick) / ticksPerSecond, bytes: $0.bytes, track: $0.track) }
        case .metrical(let ticksPerQuarter):
            // The tempo map: each change applies from its tick on (default 120 bpm).
            let map = tempos.sorted { ($0.tick, $0.track, $0.order) < ($1.tick, $1.track, $1.order) }
            var segments: [(tick: Int64, seconds: Double, microseconds: Int)] = [(0, 0, 500_000)]
            for tempo in map {
                let last = segments[segments.count - 1]
                let seconds = last.seconds + Double(tempo.tick - last.tick) * Double(last.microseconds) / (Double(ticksPerQuarter) * 1_000_000)
                if tempo.tick == last.tick { segments[segments.count - 1] = (tempo.tick, seconds, tempo.microseconds) }
                else { segments.append((tempo.tick, seconds, tempo.microseconds)) }
            }
            var index = 0
            events = sorted.map { event in
                while index + 1 < segments.count && segments[index + 1].tick <= event.tick { index += 1 }
                let segment = segments[index]
                let seconds = segment.seconds + Double(event.tick - segment.tick) * Double(segment.microseconds) / (Double(ticksPerQuarter) * 1_000_000)
                return Event(seconds: seconds, bytes: event.bytes, track: event.track)
            }
        }
    }

    /// The events as ``Lockstep/MIDIEvent``s at `sampleRate`, sample 0 being the file's start
    /// (each time rounded to the nearest sample).
    public func events(sampleRate: Double) -> [MIDIEvent] {
        events.map { MIDIEvent(sampleTime: Int64(($0.seconds * sampleRate).rounded()), bytes: $0.bytes) }
    }

    private enum Timing {
        case metrical(ticksPerQuarter: Int)
        case smpte(ticksPerSecond: Double)
    }

    /// Bounds-checked reading of big-endian numbers and variable-length quantities.
    private struct Reader {
        let bytes: [UInt8]
        let path: String
        var position = 0
        var end: Int

        init(bytes: [UInt8], path: String, position: Int = 0, end: Int? = nil) {
            self.bytes = bytes
            self.path = path
            self.position = position
            self.end = end ?? bytes.count
        }

        mutating func byte() throws(StandardMIDIFileError) -> UInt8 {
            guard position < end else {
                throw StandardMIDIFileError(path: path, offset: position, "a track ends in the middle of an event; the file is truncated or damaged")
            }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func bytes(_ count: Int) throws(StandardMIDIFileError) -> [UInt8] {
            guard count <= end - position else {
                throw StandardMIDIFileError(path: path, offset: position, "an event says it holds \(count) bytes but its track ends \(end - position) bytes later; the file is damaged")
            }
            defer { position += count }
            return Array(bytes[position..<(position + count)])
        }

        mutating func uint16() throws(StandardMIDIFileError) -> UInt16 {
            UInt16(try byte()) << 8 | UInt16(try byte())
        }

        mutating func uint32() throws(StandardMIDIFileError) -> UInt32 {
            UInt32(try uint16()) << 16 | UInt32(try uint16())
        }

        /// A variable-length quantity: at most four bytes, seven bits each.
        mutating func variableLength() throws(StandardMIDIFileError) -> Int {
            let start = position
            var value = 0
            for _ in 0..<4 {
                let byte = try byte()
                value = value << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { return value }
            }
            throw StandardMIDIFileError(path: path, offset: start, "a variable-length number runs past four bytes; the file is damaged")
        }
    }
}

/// A MIDI file that cannot be read: its path, the byte offset of the problem (when there is one),
/// and what is wrong.
public struct StandardMIDIFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The byte offset of the problem, nil for the file as a whole.
    public var offset: Int?
    /// What is wrong and what to do.
    public var problem: String

    /// Creates an error.
    public init(path: String, offset: Int?, _ problem: String) {
        self.path = path
        self.offset = offset
        self.problem = problem
    }

    /// `PATH: byte N: problem`.
    public var description: String { "\(path): \(offset.map { "byte \($0): " } ?? "")\(problem)" }
}
