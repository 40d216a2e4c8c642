#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import Lockstep

/// Checks an output before anything is written: that it is not one of the inputs, and that it fits
/// in its container and on its disk.
///
/// Renders and recordings call these before they create the output, so a mistake such as
/// `render in.wav other.wav -o ./in.wav` (or an output reached through a symlink or a hard link)
/// is refused with the input intact, and an output of terabytes is refused with its size instead of
/// filling the disk.
public enum OutputSafety {
    /// Refuses an output that is the same file as one of the inputs.
    ///
    /// Paths are compared by the file they resolve to (device and inode, through symlinks), so
    /// `in.wav`, `./in.wav`, `/abs/path/in.wav`, a symlink to it and a hard link all match. An
    /// output that does not exist yet matches nothing. `-` is standard output as the output and
    /// standard input as an input, so `render - -o - < in.wav >> in.wav` is refused too.
    /// - Parameters:
    ///   - output: the path the command will write.
    ///   - inputs: every file the command reads.
    ///   - option: how the command names the output (`-o`, `--record`, …), used in the message.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/invalidArgument`` naming both paths.
    public static func refuseOverwritingInputs(output: String, inputs: some Sequence<String>, option: String = "the output") throws(FileError) {
        guard let target = identity(of: output, standard: STDOUT_FILENO) else { return }
        for input in inputs {
            guard let source = identity(of: input, standard: STDIN_FILENO), source == target else { continue }
            let same = input == output ? "" : " (\(input))"
            throw FileError(.invalidArgument, path: output,
                problem: "\(option) is the same file as the input\(same); writing it would destroy the input: choose another output name")
        }
    }

    /// The largest number of frames a container holds, or nil when it has no practical limit.
    ///
    /// WAV, AU and AIFF store sizes in 32 bits (see ``AudioFileType/maximumDataBytes``; RF64 and
    /// W64 are the 64-bit versions of WAV); FLAC stores its length in 36 bits of frames.
    public static func frameLimit(of type: AudioFileType, format: StreamFormat) -> Int64? {
        frameLimit(of: AudioFileEncoding(type: type, format: format), channelCount: format.channelCount)
    }

    /// The largest number of frames an encoding holds with `channelCount` channels, or nil when
    /// it has no limit known before writing: WAV, AU and AIFF by their 32-bit byte counts, FLAC by
    /// its 36-bit frame count; CAF, W64, RF64 and the lossy codecs (Ogg's 64-bit granule
    /// positions, MP3's unbounded stream of frames) have none.
    public static func frameLimit(of encoding: AudioFileEncoding, channelCount: Int) -> Int64? {
        if encoding.type == .flac { return (Int64(1) << 36) - 1 }
        if let frames = encoding.type.maximumFrameCount { return frames }
        guard let bytes = encoding.type.maximumDataBytes, let bytesPerSample = encoding.bytesPerSample else { return nil }
        return bytes / Int64(max(1, bytesPerSample * channelCount))
    }

    /// Refuses an output of `frames` frames that its container cannot hold, or (for uncompressed
    /// containers) that does not fit in the free space of the output's disk.
    ///
    /// - Parameters:
    ///   - path: the output file (its folder is where the space is measured).
    ///   - type: the container.
    ///   - format: the stored rate, channels and encoding.
    ///   - frames: the frames the command will write.
    /// - Throws: ``FileError`` of kind ``FileError/Kind/invalidArgument`` with the size, the limit
    ///   and what to do.
    public static func checkSize(path: String, type: AudioFileType, format: StreamFormat, frames: Int64) throws(FileError) {
        try checkSize(path: path, encoding: AudioFileEncoding(type: type, format: format), sampleRate: format.sampleRate,
                      channelCount: format.channelCount, frames: frames)
    }

    /// Refuses an output of `frames` frames that its encoding cannot hold (see
    /// ``frameLimit(of:channelCount:)``), or, when the size is known in advance (uncompressed
    /// encodings), that does not fit in the free space of the output's disk. A compressed
    /// output's size is not known before it is written: only its container's length limit
    /// applies (FLAC's), and a full disk is reported when a write fails, with the destination
    /// left untouched.
    ///
    /// - Throws: ``FileError`` of kind ``FileError/Kind/invalidArgument`` with the size, the limit
    ///   and what to do.
    public static func checkSize(path: String, encoding: AudioFileEncoding, sampleRate: Double, channelCount: Int,
                                 frames: Int64) throws(FileError) {
        let type = encoding.type
        let frameBytes = Int64(max(1, (encoding.bytesPerSample ?? 4) * channelCount))
        let (bytes, overflow) = frames.multipliedReportingOverflow(by: frameBytes)
        let size = overflow ? Int64.max : bytes
        if let limit = frameLimit(of: encoding, channelCount: channelCount), frames > limit {
            let wider = type == .flac ? "CAF or W64" : "RF64, W64 or CAF"
            let length = encoding.isCompressed ? describe(frames: frames, rate: sampleRate)
                : describe(frames: frames, rate: sampleRate, bytes: size)
            throw FileError(.invalidArgument, path: path,
                problem: "the output would be \(length), more than \(type.description) holds (\(describe(frames: limit, rate: sampleRate))); write \(wider) instead, or shorten it")
        }
        guard !encoding.isCompressed, let free = freeBytes(near: path) else { return }
        let needed = size.addingReportingOverflow(65_536)
        if needed.overflow || needed.partialValue > free {
            throw FileError(.invalidArgument, path: path,
                problem: "the output would be \(describe(frames: frames, rate: sampleRate, bytes: size)) and its disk has \(describe(bytes: free)) free; free some space, write elsewhere, or shorten it")
        }
    }

    /// The bytes available to this user on the file system that holds `path`'s folder.
    public static func freeBytes(near path: String) -> Int64? {
        var stats = statvfs()
        let folder = FileSystem.directory(of: path)
        guard statvfs(folder.isEmpty ? "." : folder, &stats) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: stats.f_bavail).multipliedReportingOverflow(by: Int64(clamping: stats.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// A length in frames as `H:MM:SS long (N frames, B)`.
    static func describe(frames: Int64, rate: Double, bytes: Int64) -> String {
        "\(clock(frames: frames, rate: rate)) long (\(frames) frames, \(describe(bytes: bytes)))"
    }

    /// A length in frames as `H:MM:SS (N frames)`.
    static func describe(frames: Int64, rate: Double) -> String {
        "\(clock(frames: frames, rate: rate)) (\(frames) frames)"
    }

    /// A length in frames as `H:MM:SS`.
    static func clock(frames: Int64, rate: Double) -> String {
        let seconds = rate > 0 ? Double(frames) / rate : 0
        let whole = Int64(seconds.rounded(.down))
        return String(whole / 3600) + ":" + twoDigits(whole / 60 % 60) + ":" + twoDigits(whole % 60)
    }

    /// A byte count in the largest unit that keeps it above 1 (binary units).
    static func describe(bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) bytes" }
        return String(Int((value * 10).rounded()) / 10) + "." + String(Int((value * 10).rounded()) % 10) + " " + units[unit]
    }

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// The file `path` resolves to; for `-`, the file on descriptor `standard`.
    private static func identity(of path: String, standard: Int32) -> Identity? {
        var info = stat()
        if StandardStreams.names(path) {
            guard fstat(standard, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
        guard !path.isEmpty, stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
