import CSndfile
import Lockstep
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the installed libsndfile really writes, found by asking it: `sf_format_check` for the
/// combinations it accepts, then a short write into memory read back (`sf_open_virtual` both
/// ways), which catches what `sf_format_check` lets through and the encoder then refuses (AIFF
/// with 12-bit DWVW, MPEG Layer I/II) and headers that cannot store a rate exactly (XI holds
/// 44100 Hz only, WVE 8000 Hz, HTK and SDS store a rounded period, 8SVX and MPC2K 16 bits of
/// rate, VOC's 8-bit blocks a time constant).
///
/// Results are kept per process: each combination is probed once.
public enum FormatProbe {
    /// The sample formats `type` holds (``AudioFileType/fileSampleFormats``): those written and
    /// read back mono at 8000 Hz (whether the header keeps a rate exactly is checked per output,
    /// by ``AudioFileEncoding/check(sampleRate:channelCount:path:)``).
    public static func sampleFormats(of type: AudioFileType) -> [FileSampleFormat] {
        if let known = sampleFormatCache.withLock({ $0[type] }) { return known }
        let held = FileSampleFormat.allCases.filter { holds(type, format: $0) }
        sampleFormatCache.withLock { $0[type] = held }
        return held
    }

    /// Whether `type` holds any sample format: ``sampleFormats(of:)`` is not empty, found by
    /// probing only until the first one that round-trips. (Every command builds its option help,
    /// which names the writable types; probing every format of every type there cost a `render`
    /// a tenth of its time.)
    public static func holdsAnySampleFormat(_ type: AudioFileType) -> Bool {
        if let known = sampleFormatCache.withLock({ $0[type] }) { return !known.isEmpty }
        return FileSampleFormat.allCases.contains { holds(type, format: $0) }
    }

    /// Whether `type` holds `format`: accepted by `sf_format_check` and written and read back
    /// mono at 8000 Hz.
    private static func holds(_ type: AudioFileType, format: FileSampleFormat) -> Bool {
        if knownBroken.contains(Pair(type: type, format: format)) { return false }
        let word = type.majorFormat | format.libsndfileSubtype
        guard accepts(word, sampleRate: 8000, channelCount: 1) else { return false }
        return roundTrip(word, sampleRate: 8000, channelCount: 1)?.channelCount == 1
    }

    /// A container and sample format.
    struct Pair: Hashable { var type: AudioFileType; var format: FileSampleFormat }

    /// Combinations libsndfile 1.2 writes but reads back wrong, found by the round-trip tests and
    /// left out: PAF with 24-bit samples (a file of one 10-frame block reads back no frames; one
    /// of 4099 frames declares 4100).
    static let knownBroken: Set<Pair> = [Pair(type: .paf, format: .int24)]

    /// Whether libsndfile's `sf_format_check` accepts the format word at that rate and channel count.
    public static func accepts(_ format: Int32, sampleRate: Int, channelCount: Int) -> Bool {
        var info = SF_INFO()
        info.format = format
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channelCount)
        return sf_format_check(&info) != 0
    }

    /// The channel counts (1…64) `sf_format_check` accepts for the format word.
    public static func channelCounts(_ format: Int32) -> [Int] {
        (1...64).filter { accepts(format, sampleRate: 48000, channelCount: $0) }
    }

    /// Common rates, for the list in an error message about rates.
    public static let commonRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000]

    /// The ``commonRates`` a format word stores exactly with `channelCount` channels.
    public static func exactRates(_ format: Int32, channelCount: Int) -> [Int] {
        commonRates.filter { rate in
            roundTrip(format, sampleRate: rate, channelCount: channelCount).map { $0.sampleRate == rate } ?? false
        }
    }

    /// What a file in that format reads back as after a short write: its rate and channel
    /// count, or nil when libsndfile refuses to write or to read it back.
    public struct ReadBack: Sendable, Hashable {
        /// The rate the header holds.
        public var sampleRate: Int
        /// The channels the header holds.
        public var channelCount: Int
    }

    /// Writes 1152 frames of a quiet tone in the format into memory and reads them back (cached).
    public static func roundTrip(_ format: Int32, sampleRate: Int, channelCount: Int) -> ReadBack? {
        let key = Key(format: format, sampleRate: sampleRate, channelCount: channelCount)
        if let known = roundTripCache.withLock({ $0[key] }) { return known.value }
        let result = measure(format, sampleRate: sampleRate, channelCount: channelCount)
        roundTripCache.withLock { $0[key] = Cached(value: result) }
        return result
    }

    private struct Key: Hashable { var format: Int32; var sampleRate: Int; var channelCount: Int }
    private struct Cached { var value: ReadBack? }
    private static let sampleFormatCache = Mutex<[AudioFileType: [FileSampleFormat]]>([:])
    private static let roundTripCache = Mutex<[Key: Cached]>([:])

    private static func measure(_ format: Int32, sampleRate: Int, channelCount: Int) -> ReadBack? {
        guard sampleRate >= 1, channelCount >= 1, accepts(format, sampleRate: sampleRate, channelCount: channelCount) else { return nil }
        let memory = MemoryFile()
        var callbacks = MemoryFile.callbacks
        var info = SF_INFO()
        info.format = format
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(channelCount)
        let context = Unmanaged.passUnretained(memory).toOpaque()
        let written: Bool = withExtendedLifetime(memory) {
            guard let handle = Sndfile.guardedOpen(path: "", forWriting: true, { sf_open_virtual(&callbacks, Int32(SFM_WRITE), &info, context) }).handle else { return false }
            let frames = 1152
            var samples = [Float](repeating: 0, count: frames * channelCount)
            for index in samples.indices { samples[index] = 0.25 * Float(sin(Double(index / channelCount) * 0.05)) }
            let wrote = samples.withUnsafeBufferPointer { sf_writef_float(handle, $0.baseAddress!, Int64(frames)) }
            return sf_close(handle) == 0 && wrote == Int64(frames)
        }
        guard written, !memory.bytes.isEmpty else { return nil }
        memory.position = 0
        var back = SF_INFO()
        if Sndfile.major(format) == Int32(SF_FORMAT_RAW) { back = info }
        return withExtendedLifetime(memory) {
            guard let handle = Sndfile.guardedOpen(path: "", forWriting: false, { sf_open_virtual(&callbacks, Int32(SFM_READ), &back, context) }).handle else { return nil }
            defer { sf_close(handle) }
            var sample = [Float](repeating: 0, count: Int(max(1, back.channels)) * 16)
            guard back.frames > 0, sample.withUnsafeMutableBufferPointer({ sf_readf_float(handle, $0.baseAddress!, 16) }) > 0 else { return nil }
            return ReadBack(sampleRate: Int(back.samplerate), channelCount: Int(back.channels))
        }
    }
}

/// A growable file in memory for libsndfile's virtual I/O (``FormatProbe``).
final class MemoryFile {
    var bytes: [UInt8] = []
    var position: Int64 = 0

    static var callbacks: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { user in Int64(Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue().bytes.count) },
            seek: { offset, whence, user in
                let file = Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue()
                guard let target = Sndfile.seekTarget(offset, whence: whence, position: file.position, end: Int64(file.bytes.count)) else { return -1 }
                file.position = target
                return target
            },
            read: { pointer, count, user in
                let file = Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue()
                guard let pointer, count > 0, file.position < Int64(file.bytes.count) else { return 0 }
                let available = min(Int(count), file.bytes.count - Int(file.position))
                file.bytes.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress! + Int(file.position), byteCount: available) }
                file.position += Int64(available)
                return Int64(available)
            },
            write: { pointer, count, user in
                let file = Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue()
                guard let pointer, count > 0 else { return 0 }
                let end = Int(file.position) + Int(count)
                if end > file.bytes.count { file.bytes.append(contentsOf: repeatElement(0, count: end - file.bytes.count)) }
                file.bytes.withUnsafeMutableBytes { ($0.baseAddress! + Int(file.position)).copyMemory(from: pointer, byteCount: Int(count)) }
                file.position = Int64(end)
                return count
            },
            tell: { user in Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue().position })
    }
}
