import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles
import LockstepSchema

/// `lockstep info`: describes audio files.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the format, rate, channels, length and peak of audio files.",
        discussion: """
            With --json, prints one JSON object per file, one per line. The peak is that of the \
            finite samples: NaN or infinite samples in a float file read as silence, and their count \
            is shown (and warned about). A file whose data ends inside a frame shows the bytes ignored.

            The codec is shown short (PCM s16, FLAC s24, µ-law, IMA ADPCM, Vorbis, Opus, MP3, …) with \
            the bitrate: exact for uncompressed encodings, the file's average (size × 8 ÷ duration) \
            for compressed ones, and an MP3's declared mode (constant, average, variable). The length \
            is always the frames really decoded; "estimated" marks a file that does not state it \
            exactly (an MP3 without a Xing/LAME header, an Ogg file cut short), with the estimate.

            '-' reads standard input: a pipe is decoded as it arrives (nothing is kept on disk), and its length is the frames counted up to its end.

            Examples:
              lockstep info mix.wav take.flac
              lockstep info --json *.wav
              sox in.mp3 -t wav - | lockstep info -
            """
    )

    @Argument(help: "The audio files to describe (- reads standard input).")
    var files: [String] = []

    @OptionGroup(title: "Messages")
    var global: GlobalOptions

    @Flag(help: "Print JSON (one object per file, one per line) instead of text.")
    var json = false

    /// Bits per second as `1536 kb/s` (`kb` = 1000 bits).
    static func kilobits(_ bitsPerSecond: Int) -> String {
        bitsPerSecond >= 10_000 ? "\((bitsPerSecond + 500) / 1000) kb/s" : String(format: "%.1f kb/s", Double(bitsPerSecond) / 1000)
    }

    func run() throws {
        guard !files.isEmpty else {
            throw CLIError(message: "info: no input files; give one or more audio files", exitCode: 64)
        }
        try InputFiles.checkStandardInput(files, command: "info")
        var failures: [String] = []
        for path in files {
            do {
                let reader = try AudioFileReader(path: path, truncation: .reject)
                let scan = try reader.scanPeak()
                if let error = reader.truncationError { throw error }
                guard scan.frames > 0 else {
                    throw FileError(.emptyFile, path: path,
                        problem: "the header is valid but the file holds no audio frames (\(reader.containerName), \(Int(reader.format.sampleRate)) Hz, \(reader.format.channelCount) ch); re-export or re-record it")
                }
                // The reader reads non-finite samples as 0, so the peak is finite; a guard all the same,
                // as JSON cannot carry NaN.
                let peak = scan.peak.isFinite ? scan.peak : 0
                let peakDB = Decibels.fromLinear(peak)
                let report = FileInfoReport(file: path, container: reader.containerName, encoding: reader.encodingName,
                                            sampleFormat: reader.format.sampleFormat.rawValue,
                                            codec: reader.codecName, lossy: reader.isLossy, bitrate: reader.bitrate,
                                            bitrateExact: reader.bitrateIsExact, bitrateMode: reader.bitrateMode?.rawValue,
                                            lengthExact: reader.lengthIsExact, estimatedFrames: reader.estimatedFrameCount,
                                            sampleRate: Int(reader.format.sampleRate), channels: reader.format.channelCount,
                                            frames: scan.frames, peak: Double(peak), peakDB: Double(peakDB),
                                            nonFiniteSamples: reader.nonFiniteSampleCount,
                                            partialFrameBytes: reader.partialFrameByteCount)
                if json {
                    print(JSONSchema.line(report))
                } else {
                    var line = "\(path): \(report.container), \(report.codec), \(report.sampleRate) Hz, "
                        + "\(report.channels) ch, \(report.frames) frames, \(Terminal.time(report.seconds))"
                    if !report.lengthExact {
                        line += " (length estimated"
                            + (report.estimatedFrames.map { " as \($0) frames" } ?? "")
                            + "; counted by decoding)"
                    }
                    if let bitrate = report.bitrate {
                        line += ", " + Self.kilobits(bitrate) + (report.bitrateExact ? "" : " average")
                            + (report.bitrateMode.map { " (\($0) bitrate)" } ?? "")
                    }
                    line += ", peak \(Terminal.decibels(peakDB))"
                    if report.nonFiniteSamples > 0 {
                        line += ", \(report.nonFiniteSamples) non-finite \(report.nonFiniteSamples == 1 ? "sample" : "samples") (read as silence)"
                    }
                    if report.partialFrameBytes > 0 {
                        line += ", ends inside a frame (\(report.partialFrameBytes) \(report.partialFrameBytes == 1 ? "byte" : "bytes") ignored)"
                    }
                    print(line)
                }
            } catch let error as FileError {
                failures.append(error.description)
            } catch {
                failures.append("\(path): \(userMessage(error))")
            }
        }
        for failure in failures {
            log.error("info: \(failure)")
        }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
